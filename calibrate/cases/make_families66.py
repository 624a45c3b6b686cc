#!/usr/bin/env python3
"""Family set 66 (DeepSeek-V4, deepseek_v4: DeepseekV4ForCausalLM), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families66-input.jsonl. Every row gives layer_types with
"sliding_attention" for each layer (memplan refuses the compressed_sparse / heavily_compressed layers, whose
compressor, Lightning Indexer and block bias it does not replay) and attn_implementation "eager" (the class has no
SDPA path: from_config refuses "sdpa"). Two cuts of the published DeepSeek-V4-Flash shapes
(data/validation/notes-f66/deepseek-v4-flash-sliding.json):
  P (published widths): hidden 4096, 64 heads of head_dim 512 (rope 64) over one shared K = V head, q_lora_rank
     1024, o_groups 8 x o_lora_rank 1024, hc_mult 4 with 20 Sinkhorn steps, moe_intermediate 2048, vocabulary
     129280; cut to 2 layers (one hash_moe, one moe) and 16 routed experts (6 per token, 1 shared);
  S (scaled body, published head_dim / q_lora_rank / mHC): hidden 1024, 16 heads x 512, o_groups 8 x o_lora_rank
     512, moe_intermediate 512, 16 experts (6 per token), 3 layers (hash_moe, moe, moe), vocabulary 129280.
sliding_window 128 (the published window: the eager mask is materialised [B, 1, S, S] whatever the window).
Rows: amp bf16, LoRA in bf16 on the attention's plain projections (q_a_proj, q_b_proj, kv_proj, o_b_proj; not the
grouped o_a_proj), fp32, amp fp16 with accumulation, checkpointed bf16, generate() from the published widths.
Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from the prediction at the
commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families66.py > calibrate/cases/families66-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 12.6, 16.6  # the uncapped f66-v4s-ampbf16-b3s1000 row predicted 13568.0 MiB allocated, 16348 reserved (this commit)

BASE = {"vocab_size": 129280, "hidden_size": 4096, "moe_intermediate_size": 2048, "num_hidden_layers": 2,
        "num_attention_heads": 64, "num_key_value_heads": 1, "head_dim": 512, "q_lora_rank": 1024,
        "num_experts_per_tok": 6, "n_routed_experts": 16, "n_shared_experts": 1,
        "scoring_func": "sqrtsoftplus", "norm_topk_prob": True, "routed_scaling_factor": 1.5,
        "max_position_embeddings": 1048576, "rope_theta": 10000, "compress_rope_theta": 160000,
        "hc_mult": 4, "hc_sinkhorn_iters": 20, "hc_eps": 1e-06, "swiglu_limit": 10.0, "sliding_window": 128,
        "o_groups": 8, "o_lora_rank": 1024, "index_n_heads": 64, "index_head_dim": 128, "index_topk": 512,
        "num_nextn_predict_layers": 1, "hidden_act": "silu", "rms_norm_eps": 1e-06, "tie_word_embeddings": False,
        "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 1, "use_cache": True,
        "layer_types": ["sliding_attention"] * 2, "mlp_layer_types": ["hash_moe", "moe"]}
P = BASE
S = dict(BASE, hidden_size=1024, moe_intermediate_size=512, num_hidden_layers=3, num_attention_heads=16,
         o_lora_rank=512, layer_types=["sliding_attention"] * 3, mlp_layer_types=["hash_moe", "moe", "moe"])
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_a_proj", "q_b_proj", "kv_proj", "o_b_proj"]}


row = functools.partial(family_row, "deepseek_v4", attn="eager")


FIRST = ("f66-v4s-ampbf16-b3s1000", S, "training", 3, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f66-v4s-bf16-lora-b5s700", S, "training", 5, 700, "bf16", lora=LORA),
    row("f66-v4s-fp32-b3s300", S, "training", 3, 300, "fp32"),
    row("f66-v4s-ampfp16-b3s700-acc2", S, "training", 3, 700, "amp_fp16", accum=2),
    row("f66-v4s-bf16-ckpt-b6s1000", S, "training", 6, 1000, "bf16", ckpt=True),
    row("f66-v4p-infer-bf16-b3s300-g8", P, "inference", 3, 300, "bf16", gen=8),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
