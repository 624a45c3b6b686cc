#!/usr/bin/env python3
"""Family set 19, minimax_m2 (MiniMax-M2) and lfm2_moe (LFM2-8B-A1B): tuning rows (f19-*, measured before the
builders are written against them) and held-out rows (f20-*, predicted at the final commit, measured blind).
Published widths; MiniMax-M2 with 2 decoder layers (1 where AdamW state of 256 experts would not fit), fewer
experts only under amp (fp32 master weights); LFM2-8B-A1B with 4-8 of its 24 layers (the published layer pattern's
prefix: 2 dense feed-forwards, then MoE).
Usage: python3 minimax.py   (prints tuning() then holdout() as JSONL)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

tr = training
# MiniMaxAI/MiniMax-M2 config.json: rotary_dim 64 of head_dim 128 -> partial_rotary_factor 0.5.
MM2 = {"vocab_size": 200064, "hidden_size": 3072, "intermediate_size": 1536, "num_hidden_layers": 2,
       "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 256,
       "num_experts_per_tok": 8, "max_position_embeddings": 196608, "rms_norm_eps": 1e-6,
       "rope_parameters": {"rope_type": "default", "rope_theta": 5000000.0, "partial_rotary_factor": 0.5}}
MM2_1L = dict(MM2, num_hidden_layers=1)
MM2_E32 = dict(MM2, num_local_experts=32)
# LiquidAI/LFM2-8B-A1B config.json (24 layers; attention at 2, 6, 10, 14, 18, 21).
LFM_TYPES = ["conv", "conv", "full_attention", "conv", "conv", "conv", "full_attention", "conv", "conv", "conv",
             "full_attention", "conv", "conv", "conv", "full_attention", "conv", "conv", "conv", "full_attention",
             "conv", "conv", "full_attention", "conv", "conv"]
LFM = {"vocab_size": 65536, "hidden_size": 2048, "intermediate_size": 7168, "moe_intermediate_size": 1792,
       "num_attention_heads": 32, "num_key_value_heads": 8, "num_experts": 32, "num_experts_per_tok": 4,
       "num_dense_layers": 2, "norm_eps": 1e-5, "conv_L_cache": 3, "conv_bias": False, "use_expert_bias": True,
       "norm_topk_prob": True, "routed_scaling_factor": 1.0, "tie_word_embeddings": True,
       "max_position_embeddings": 128000, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}}


def lfm(n, types=None):
    return dict(LFM, num_hidden_layers=n, layer_types=list(types or LFM_TYPES[:n]))


LFM8 = lfm(8)
LFM6 = lfm(6, ["conv", "conv", "full_attention", "conv", "conv", "full_attention"])
LFM4 = lfm(4)


def tuning():
    return [
        tr("f19-mm2-bf16-b3s1000-sgd-eager", hf("minimax_m2", MM2, "eager"), 3, 1000, "bf16", "sgd", _est_gib=40),
        tr("f19-mm2e32-ampbf16-b4s1024-ckpt", hf("minimax_m2", MM2_E32), 4, 1024, "amp_bf16", "adamw", ckpt=True,
           _est_gib=40),
        inference("f19-mm2-infer-bf16-b4s512-g16", hf("minimax_m2", MM2), 4, 512, "bf16", 16) | {"_est_gib": 20},
        tr("f19-lfm-bf16-b4s2048", hf("lfm2_moe", LFM8), 4, 2048, "bf16", "adamw", _est_gib=35),
        tr("f19-lfm-ampbf16-b2s1500-ckpt-acc2", hf("lfm2_moe", LFM6), 2, 1500, "amp_bf16", "adamw", ckpt=True,
           accum=2, _est_gib=34),
        inference("f19-lfm-infer-bf16-b8s512-g32", hf("lfm2_moe", LFM8), 8, 512, "bf16", 32) | {"_est_gib": 8},
    ]


def holdout():
    return [
        tr("f20-mm2-bf16-b1s2048-1l", hf("minimax_m2", MM2_1L), 1, 2048, "bf16", "adamw", _est_gib=50),
        tr("f20-lfm-ampfp16-b5s1000-acc2", hf("lfm2_moe", LFM4), 5, 1000, "amp_fp16", "adamw", accum=2,
           _est_gib=26),
        inference("f20-mm2-infer-bf16-b2s1500-g24-eager", hf("minimax_m2", MM2, "eager"), 2, 1500, "bf16", 24)
        | {"_est_gib": 22},
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
