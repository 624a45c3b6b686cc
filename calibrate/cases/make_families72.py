#!/usr/bin/env python3
"""Family set 72 (EXAONE MoE, exaone_moe: ExaoneMoeForCausalLM, LG K-EXAONE), written from the installed
transformers 5.17 modeling file without a device: writes calibrate/cases/families72-input.jsonl. Two bodies:
  KEX: K-EXAONE-236B-A23B's widths (models/zoo/k-exaone-236b-a23b.json: hidden 6144, 64 heads / 8 KV heads of 128,
       dense intermediate 18432, experts of 2048, one shared expert, top 8, routed_scaling_factor 2.5, n_group 1,
       vocabulary 153600, a 128-token window on three layers of four with NoPE full-attention layers), cut to 4
       layers (layer 0 dense, three sparse; sliding, sliding, sliding, full) and 16 experts;
  SMALL: the class's other paths at a width that trains in fp32 / amp: hidden 2048, 16 / 4 heads of 128, dense
       intermediate 6144, 32 experts of 512 top 8 over n_group 4 / topk_group 2 (the group mask's copy), 6 layers
       with layer_types derived from sliding_window_pattern 4 (no layer_types key) and first_k_dense_replace 1
       (no mlp_layer_types key), window 128.
SDPA and eager; bf16 / amp bf16 / fp32 / amp fp16 with accumulation and checkpointing, LoRA on q_proj / v_proj
(peft 0.21 has no default target for exaone_moe), generate(). Caps: two copies of the first row under
memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the predictions).
Usage: python3 calibrate/cases/make_families72.py > calibrate/cases/families72-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 41.0, 46.4  # the uncapped f72-kex-bf16-b3s700 row predicted 43991.3 MiB allocated, 46904 reserved (this commit)

KEX_LAYERS = 4
KEX = {"architectures": ["ExaoneMoeForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 53,
       "pad_token_id": 0, "first_k_dense_replace": 1, "head_dim": 128, "hidden_act": "silu", "hidden_size": 6144,
       "intermediate_size": 18432,
       "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "sliding_attention" for i in range(KEX_LAYERS)],
       "max_position_embeddings": 262144, "mlp_layer_types": ["dense"] + ["sparse"] * (KEX_LAYERS - 1),
       "moe_intermediate_size": 2048, "n_group": 1, "norm_topk_prob": True, "num_attention_heads": 64,
       "num_experts": 16, "num_experts_per_tok": 8, "num_hidden_layers": KEX_LAYERS, "num_key_value_heads": 8,
       "num_shared_experts": 1, "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "routed_scaling_factor": 2.5,
       "sliding_window": 128, "sliding_window_pattern": "LLLG", "tie_word_embeddings": False, "topk_group": 1,
       "use_cache": True, "vocab_size": 153600}
SMALL = {"architectures": ["ExaoneMoeForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 53,
         "pad_token_id": 0, "first_k_dense_replace": 1, "head_dim": 128, "hidden_act": "silu", "hidden_size": 2048,
         "intermediate_size": 6144, "max_position_embeddings": 131072, "moe_intermediate_size": 512, "n_group": 4,
         "norm_topk_prob": True, "num_attention_heads": 16, "num_experts": 32, "num_experts_per_tok": 8,
         "num_hidden_layers": 6, "num_key_value_heads": 4, "num_shared_experts": 1, "rms_norm_eps": 1e-05,
         "rope_theta": 1000000.0, "routed_scaling_factor": 2.5, "sliding_window": 128, "sliding_window_pattern": 4,
         "tie_word_embeddings": False, "topk_group": 2, "use_cache": True, "vocab_size": 153600}
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


row = functools.partial(family_row, "exaone_moe")


FIRST = ("f72-kex-bf16-b3s700", KEX, "training", 3, 700, "bf16")
rows = [
    row(*FIRST),
    row("f72-kex-bf16-lora-b5s1000", KEX, "training", 5, 1000, "bf16", lora=LORA),
    row("f72-small-ampbf16-b3s700", SMALL, "training", 3, 700, "amp_bf16"),
    row("f72-small-fp32-eager-b2s300", SMALL, "training", 2, 300, "fp32", attn="eager"),
    row("f72-small-ampfp16-b3s600-acc2-ckpt", SMALL, "training", 3, 600, "amp_fp16", ckpt=True, accum=2),
    row("f72-kex-infer-bf16-b4s900-g16", KEX, "inference", 4, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
