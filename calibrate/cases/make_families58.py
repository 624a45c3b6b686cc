#!/usr/bin/env python3
"""Family set 58 (DeepSeek-V3.2, deepseek_v32: DeepseekV32ForCausalLM), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families58-input.jsonl. Two cuts of the published
deepseek-ai/DeepSeek-V3.2 config.json (models/zoo/deepseek-v3.2.json; V3.2-Exp has the same shapes):
  P (published widths): hidden 7168, 128 heads of nope 128 + rope 64 / v 128, q_lora_rank 1536, kv_lora_rank 512,
     intermediate 18432, moe_intermediate 2048, vocabulary 129280, the indexer's 64 heads x 128 keeping 2048 keys;
     cut to 2 layers (first_k_dense_replace 1: one dense, one MoE) and 16 routed experts (n_group 8, topk_group 4,
     8 per token, 1 shared);
  S (scaled body, published attention and indexer heads): hidden 2048, 16 heads (nope 128 + rope 64 / v 128),
     q_lora_rank 1536, kv_lora_rank 512, intermediate 6144, moe_intermediate 768, 3 layers (1 dense), the same
     16-expert routing and indexer (64 x 128, index_topk 2048), vocabulary 129280.
Sequence lengths above index_topk (2048: the indexer keeps 2048 of T keys) and below it (every key kept) both
appear; SDPA (a materialised bool mask, never skipped) and eager; amp bf16 / bf16 / fp32 / amp fp16 with
accumulation, checkpointing, LoRA on the attention projections (the indexer's wq_b / wk / weights_proj are not
targeted), generate() past index_topk. Batch 1 in the fp32 row: torch.matmul's broadcast copy of the indexer keys
is a view there. Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from the
prediction at the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families58.py > calibrate/cases/families58-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 20.2, 24.5  # the uncapped f58-v32s-ampbf16-b2s2600 row predicted 21660.9 MiB allocated, 24492 reserved (this commit)

BASE = {"vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
        "num_hidden_layers": 2, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1,
        "n_routed_experts": 16, "routed_scaling_factor": 2.5, "kv_lora_rank": 512, "q_lora_rank": 1536,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "n_group": 8, "topk_group": 4,
        "num_experts_per_tok": 8, "first_k_dense_replace": 1, "norm_topk_prob": True, "hidden_act": "silu",
        "max_position_embeddings": 163840, "rms_norm_eps": 1e-06, "tie_word_embeddings": False,
        "attention_bias": False, "attention_dropout": 0.0, "index_topk": 2048, "index_head_dim": 128,
        "index_n_heads": 64, "bos_token_id": 0, "eos_token_id": 1, "use_cache": True}
P = BASE
S = dict(BASE, hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768, num_hidden_layers=3,
         num_attention_heads=16, num_key_value_heads=16)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0,
        "target_modules": ["q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"]}


row = functools.partial(family_row, "deepseek_v32")


FIRST = ("f58-v32s-ampbf16-b2s2600", S, "training", 2, 2600, "amp_bf16")
rows = [
    row(*FIRST),
    row("f58-v32s-bf16-eager-b3s1000", S, "training", 3, 1000, "bf16", attn="eager"),
    row("f58-v32s-fp32-b1s2400", S, "training", 1, 2400, "fp32"),
    row("f58-v32s-ampfp16-b2s700-acc2", S, "training", 2, 700, "amp_fp16", accum=2),
    row("f58-v32s-bf16-ckpt-b3s2100", S, "training", 3, 2100, "bf16", ckpt=True),
    row("f58-v32s-bf16-lora-b2s1500", S, "training", 2, 1500, "bf16", lora=LORA),
    row("f58-v32p-bf16-b1s2300", P, "training", 1, 2300, "bf16"),
    row("f58-v32p-infer-bf16-b2s2200-g12", P, "inference", 2, 2200, "bf16", gen=12),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
