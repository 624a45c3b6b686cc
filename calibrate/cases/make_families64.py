#!/usr/bin/env python3
"""Family set 64 (GLM-5, glm_moe_dsa: GlmMoeDsaForCausalLM), written from the installed transformers 5.17 modeling
file without a device: writes calibrate/cases/families64-input.jsonl. Two cuts of the published zai-org/GLM-5 shapes
(models/zoo/glm-5.json; the class defaults are the same numbers):
  P (published widths): hidden 6144, 64 heads of nope 192 + rope 64 / v 256, q_lora_rank 2048, kv_lora_rank 512,
     intermediate 12288, moe_intermediate 2048, vocabulary 154880, the indexer's 32 heads x 128 keeping 2048 keys;
     cut to 2 layers (first_k_dense_replace 1: one dense, one MoE) and 16 routed experts (n_group 1, 8 per token,
     1 shared); layer 1 "shared" (it reuses layer 0's top-k: GLM-5.1 / 5.2's cross-layer sharing);
  S (scaled body, published attention and indexer heads, index_topk 512): hidden 2048, 16 heads (nope 192 + rope 64
     / v 256), q_lora_rank 2048, kv_lora_rank 512, intermediate 6144, moe_intermediate 768, 4 layers (1 dense), the
     same 16-expert routing, indexer_types full / shared / full / shared, vocabulary 154880.
index_topk 512 in S puts every training row above it (the indexer keeps 512 of T keys); the generate() row's
2100-token prompt is above P's 2048. SDPA (a materialised bool mask, never skipped) and eager; amp bf16 / fp32 /
amp fp16 with accumulation / bf16 checkpointed (each layer's checkpoint frame keeps the top-k it was passed) /
LoRA on the attention projections (peft has no glm_moe_dsa mapping; the indexer's wq_b / wk / weights_proj are
not targeted). Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from the
prediction at the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families64.py > calibrate/cases/families64-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 18.2, 21.5  # the uncapped f64-glms-ampbf16-b2s1000 row predicted 19518.3 MiB allocated, 21452 reserved (this commit)

BASE = {"vocab_size": 154880, "hidden_size": 6144, "intermediate_size": 12288, "moe_intermediate_size": 2048,
        "num_hidden_layers": 2, "num_attention_heads": 64, "num_key_value_heads": 64, "n_shared_experts": 1,
        "n_routed_experts": 16, "routed_scaling_factor": 2.5, "kv_lora_rank": 512, "q_lora_rank": 2048,
        "qk_rope_head_dim": 64, "v_head_dim": 256, "qk_nope_head_dim": 192, "n_group": 1, "topk_group": 1,
        "num_experts_per_tok": 8, "first_k_dense_replace": 1, "norm_topk_prob": True, "hidden_act": "silu",
        "max_position_embeddings": 202752, "rms_norm_eps": 1e-05, "tie_word_embeddings": False,
        "attention_bias": False, "attention_dropout": 0.0, "index_topk": 2048, "index_head_dim": 128,
        "index_n_heads": 32, "indexer_types": ["full", "shared"], "bos_token_id": 0, "eos_token_id": 1,
        "use_cache": True}
P = BASE
S = dict(BASE, hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768, num_hidden_layers=4,
         num_attention_heads=16, num_key_value_heads=16, index_topk=512,
         indexer_types=["full", "shared", "full", "shared"])
LORA = {"r": 16, "alpha": 32, "dropout": 0.0,
        "target_modules": ["q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"]}


row = functools.partial(family_row, "glm_moe_dsa")


FIRST = ("f64-glms-ampbf16-b2s1000", S, "training", 2, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f64-glms-fp32-eager-b1s700", S, "training", 1, 700, "fp32", attn="eager"),
    row("f64-glms-ampfp16-b3s700-acc2", S, "training", 3, 700, "amp_fp16", accum=2),
    row("f64-glms-bf16-ckpt-b3s1000", S, "training", 3, 1000, "bf16", ckpt=True),
    row("f64-glms-bf16-lora-b5s300", S, "training", 5, 300, "bf16", lora=LORA),
    row("f64-glmp-infer-bf16-b2s2100-g10", P, "inference", 2, 2100, "bf16", gen=10),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
