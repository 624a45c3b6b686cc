#!/usr/bin/env python3
"""Family set 23, the Mamba2 hybrids falcon_h1 (FalconH1ForCausalLM) and nemotron_h (NemotronHForCausalLM), run on
their PyTorch paths (no mamba_ssm / causal_conv1d kernels on the measuring machine: the mixers' torch_forward-style
chunked SSD in fp32, as mamba2 in family set 21).

falcon_h1: every decoder layer runs attention and the Mamba2 mixer on the same normed input (muP multipliers on the
inputs, the projection and the outputs), sums them, then a SwiGLU MLP. Widths of tiiuae/Falcon-H1-0.5B (all 36
layers), -1.5B (6 of 24) and -7B (4 of 44).
nemotron_h: blocks of norm + one mixer + residual, the mixer chosen per layer by hybrid_override_pattern (M Mamba2
with the grouped gated RMSNorm, * attention without positions, - ReLU^2 MLP); widths of nvidia/Nemotron-H-8B-Base-8K
and nvidia/NVIDIA-Nemotron-Nano-9B-v2, the first blocks of their patterns (every kind, in their order).
Neither type is in harness.HF_TYPES: calibrate/harness_kinds/dec.py builds them (AutoModelForCausalLM, token-id
batches, the harness's causal-LM inference with the DynamicCache in past_key_values).
Tuning rows (f23-*) are measured with whole-run allocator recordings before the builders are checked against them;
held-out rows (f24-*) are other shapes and settings, predicted at the final commit and measured blind.
Usage: python3 hyb2.py   (JSONL: tuning, then holdout)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

# tiiuae/Falcon-H1-0.5B widths: 36 layers of hidden 1024, 8 heads of 64 (2 KV), MLP 2048, 24 Mamba heads of 64
# (d_ssm 1536), state 128, one group, chunk 128, vocab 32784, untied head; the checkpoint's muP multipliers.
FH1_05B = {"vocab_size": 32784, "hidden_size": 1024, "intermediate_size": 2048, "num_hidden_layers": 36,
           "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64, "mamba_d_ssm": 1536,
           "mamba_n_heads": 24, "mamba_d_head": 64, "mamba_d_state": 128, "mamba_n_groups": 1, "mamba_d_conv": 4,
           "mamba_expand": 2, "mamba_chunk_size": 128, "mamba_conv_bias": True, "mamba_proj_bias": False,
           "mamba_rms_norm": False, "mamba_norm_before_gate": False, "projectors_bias": False,
           "tie_word_embeddings": False, "rms_norm_eps": 1e-5, "max_position_embeddings": 16384,
           "rope_parameters": {"rope_type": "default", "rope_theta": 1e11},
           "attention_in_multiplier": 1.0, "attention_out_multiplier": 0.9375, "key_multiplier": 0.390625,
           "embedding_multiplier": 5.656854249492381, "lm_head_multiplier": 0.0390625,
           "mlp_multipliers": [0.8838834764831844, 0.5859375], "ssm_in_multiplier": 1.25,
           "ssm_multipliers": [0.3535533905932738, 0.25, 0.3535533905932738, 0.5, 0.3535533905932738],
           "ssm_out_multiplier": 0.23570226039551587, "pad_token_id": 2, "bos_token_id": 1, "eos_token_id": 2}
# tiiuae/Falcon-H1-1.5B widths (6 of 24 layers): hidden 2048, 8 heads of 128 (2 KV), MLP 4608, 48 Mamba heads of 64
# (d_ssm 3072), state 256, vocab 65537; the gated RMSNorm in the mixer on (mamba_rms_norm).
FH1_15B_6 = dict(FH1_05B, vocab_size=65537, hidden_size=2048, intermediate_size=4608, num_hidden_layers=6,
                 head_dim=128, mamba_d_ssm=3072, mamba_n_heads=48, mamba_d_head=64, mamba_d_state=256,
                 mamba_rms_norm=True, max_position_embeddings=131072)
# tiiuae/Falcon-H1-7B widths (4 of 44 layers): hidden 3072, 12 heads of 128 (2 KV), MLP 12288, 24 Mamba heads of
# 128 (d_ssm 3072), state 256, vocab 130048; gated RMSNorm on, applied after the gate (norm_before_gate true).
FH1_7B_4 = dict(FH1_05B, vocab_size=130048, hidden_size=3072, intermediate_size=12288, num_hidden_layers=4,
                num_attention_heads=12, head_dim=128, mamba_d_ssm=3072, mamba_n_heads=24, mamba_d_head=128,
                mamba_d_state=256, mamba_rms_norm=True, mamba_norm_before_gate=True, max_position_embeddings=262144)

# nvidia/Nemotron-H-8B-Base-8K widths: hidden 4096, 32 heads of 128 (8 KV), ReLU^2 MLP 21504, 128 Mamba heads of 64,
# state 128, 8 groups, chunk 128, vocab 131072, untied; the first nine blocks of its pattern.
NH_8B_9 = {"vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 21504, "num_attention_heads": 32,
           "num_key_value_heads": 8, "head_dim": 128, "mamba_num_heads": 128, "mamba_head_dim": 64,
           "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "chunk_size": 128, "expand": 2,
           "use_conv_bias": True, "use_bias": False, "mlp_bias": False, "attention_bias": False,
           "mlp_hidden_act": "relu2", "mamba_hidden_act": "silu", "layer_norm_epsilon": 1e-5,
           "residual_in_fp32": False, "tie_word_embeddings": False, "max_position_embeddings": 8192,
           "hybrid_override_pattern": "M-M-M-M*-", "num_hidden_layers": 9,
           "pad_token_id": 2, "bos_token_id": 1, "eos_token_id": 2}
NH_8B_8 = dict(NH_8B_9, hybrid_override_pattern="M-M-M-M*", num_hidden_layers=8)
# nvidia/NVIDIA-Nemotron-Nano-9B-v2 widths: hidden 4480, 40 heads of 128 (8 KV), MLP 15680, 128 Mamba heads of 80,
# state 128, 8 groups; the first fifteen blocks of its pattern (its first attention block is the fifteenth).
NANO9B_15 = dict(NH_8B_9, hidden_size=4480, intermediate_size=15680, num_attention_heads=40, mamba_head_dim=80,
                 max_position_embeddings=131072, hybrid_override_pattern="M-M-M-MM-M-M-M*", num_hidden_layers=15)

FH1, NH = "falcon_h1", "nemotron_h"


def tuning():
    return [
        training("f23-fh1-05b-fp32-b2s512", hf(FH1, FH1_05B), 2, 512, "fp32", "adamw", _est_gib=20),
        training("f23-fh1-7b-ampbf16-b1s1000-4l-ckpt-eager", hf(FH1, FH1_7B_4, "eager"), 1, 1000, "amp_bf16",
                 "adamw", ckpt=True, _est_gib=30),
        dict(inference("f23-fh1-15b-infer-bf16-b4s500-g16-6l", hf(FH1, FH1_15B_6), 4, 500, "bf16", 16),
             _est_gib=24),
        training("f23-nh-8b-bf16-b1s1000-9l", hf(NH, NH_8B_9), 1, 1000, "bf16", "adamw", _est_gib=42),
        training("f23-nh-nano9b-bf16-b2s300-15l-ckpt-acc2", hf(NH, NANO9B_15), 2, 300, "bf16", "adamw", ckpt=True,
                 accum=2, _est_gib=36),
        dict(inference("f23-nh-nano9b-infer-bf16-b1s1000-g16-15l", hf(NH, NANO9B_15), 1, 1000, "bf16", 16),
             _est_gib=26),
    ]


def holdout():
    return [
        training("f24-fh1-15b-ampfp16-b3s256-6l-ckpt", hf(FH1, FH1_15B_6), 3, 256, "amp_fp16", "adamw", ckpt=True,
                 _est_gib=24),
        dict(inference("f24-fh1-05b-infer-ampbf16-b3s1500-g24-eager", hf(FH1, FH1_05B, "eager"), 3, 1500,
                       "amp_bf16", 24), _est_gib=14),
        training("f24-nh-8b-ampbf16-b2s384-8l-acc2", hf(NH, NH_8B_8), 2, 384, "amp_bf16", "adamw", accum=2,
                 _est_gib=52),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
