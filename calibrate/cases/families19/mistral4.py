#!/usr/bin/env python3
"""Family set 19, mistral4 (Mistral-Small-4-119B-2603's text model: MLA attention, 128 routed + 1 shared expert,
top 4) and ministral3 (Ministral 3 / Devstral 2's text model: Llama's block with position-scaled queries): tuning
rows (f19-*, measured before the builders are written against them) and held-out rows (f20-*, predicted at the final
commit, measured blind). Published widths with few layers; mistral4 trains under plain SGD (one expert layer's
3.2 G parameters would not fit AdamW's state at two layers), with `first_k_dense_replace` 1 (a dense SwiGLU first
layer) where one expert layer must do.
Usage: python3 mistral4.py   (prints tuning() then holdout() as JSONL)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

tr = training
# Mistral-Small-4-119B-2603 text widths (Mistral4Config's defaults are that checkpoint's).
M4 = {"vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 12288, "moe_intermediate_size": 2048,
      "num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 32, "n_shared_experts": 1,
      "n_routed_experts": 128, "num_experts_per_tok": 4, "n_group": 1, "topk_group": 1, "kv_lora_rank": 256,
      "q_lora_rank": 1024, "qk_rope_head_dim": 64, "qk_nope_head_dim": 64, "v_head_dim": 128,
      "first_k_dense_replace": 0, "norm_topk_prob": True, "rms_norm_eps": 1e-6, "max_position_embeddings": 1048576}
M4_D1 = dict(M4, first_k_dense_replace=1)         # dense layer 0, expert layer 1
M4_3L = dict(M4, num_hidden_layers=3)
# Ministral-3-8B (2512) and Ministral-3-3B (2512) text widths.
MI3_8 = {"vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 4,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "rms_norm_eps": 1e-5,
         "max_position_embeddings": 262144, "tie_word_embeddings": False}
MI3_3 = dict(MI3_8, hidden_size=3072, intermediate_size=9216, num_hidden_layers=3, tie_word_embeddings=True)
MI3_14 = dict(MI3_8, hidden_size=5120, intermediate_size=16384, num_hidden_layers=3)


def tuning():
    return [
        tr("f19-m4-bf16-b2s1024-sgd", hf("mistral4", M4), 2, 1024, "bf16", "sgd", _est_gib=34),
        tr("f19-m4d1-ampbf16-b1s2048-ckpt-sgd", hf("mistral4", M4_D1), 1, 2048, "amp_bf16", "sgd", ckpt=True,
           _est_gib=50),
        inference("f19-m4-infer-bf16-b4s512-g16", hf("mistral4", M4_3L), 4, 512, "bf16", 16) | {"_est_gib": 25},
        tr("f19-mi3-bf16-b2s4096", hf("ministral3", MI3_8), 2, 4096, "bf16", "adamw", _est_gib=34),
        tr("f19-mi3s-fp32-b3s1000-eager-acc2", hf("ministral3", MI3_3, "eager"), 3, 1000, "fp32", "adamw", accum=2,
           _est_gib=18),
        inference("f19-mi3-infer-bf16-b8s1500-g32", hf("ministral3", dict(MI3_8, num_hidden_layers=6)), 8, 1500,
                  "bf16", 32) | {"_est_gib": 12},
    ]


def holdout():
    return [
        tr("f20-m4d1-bf16-b3s1000-eager-sgd", hf("mistral4", M4_D1, "eager"), 3, 1000, "bf16", "sgd", _est_gib=26),
        tr("f20-mi3l-ampfp16-b4s1024-ckpt", hf("ministral3", MI3_14), 4, 1024, "amp_fp16", "adamw", ckpt=True,
           _est_gib=42),
        inference("f20-m4d1-infer-bf16-b5s700-g24", hf("mistral4", M4_D1), 5, 700, "bf16", 24) | {"_est_gib": 14},
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
