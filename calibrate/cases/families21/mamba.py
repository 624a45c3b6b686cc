#!/usr/bin/env python3
"""Family set 21, the state-space causal LMs mamba (MambaForCausalLM) and mamba2 (Mamba2ForCausalLM), run on their
PyTorch paths (no mamba_ssm / causal_conv1d kernels on the measuring machine): Mamba's sequential selective scan
(MambaMixer.slow_forward, one small step per token) and Mamba2's chunked SSD in PyTorch ops (Mamba2Mixer.torch_forward,
fp32 intermediates of size batch x padded length x chunk_size x heads x state). Published widths: state-spaces
mamba-130m-hf (24 layers, all of them), mamba-1.4b-hf / mamba-2.8b-hf (few of their 48 / 64 layers),
Mamba-Codestral-7B-v0.1 (2 of 64 layers) and the mamba2-2.7b width (80 heads of 64, one group; 3 layers).
These classes have no attention: transformers refuses attn_implementation="sdpa" for them, so every case says
"eager". The harness builds and runs them through calibrate/harness_kinds/mamba.py (the cache is `cache_params`).
Tuning rows (f21-mb*-*) are measured with whole-run allocator recordings before the builder is checked against
them; held-out rows (f22-mb*-*) are other shapes and settings, predicted at the final commit and measured blind.
Usage: python3 mamba.py   (JSONL: tuning, then holdout)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

# state-spaces/mamba-130m-hf / -1.4b-hf / -2.8b-hf config.json widths
MB_130M = {"vocab_size": 50280, "hidden_size": 768, "num_hidden_layers": 24, "state_size": 16, "expand": 2,
           "conv_kernel": 4, "time_step_rank": 48, "layer_norm_epsilon": 1e-5, "use_bias": False,
           "use_conv_bias": True, "residual_in_fp32": True, "pad_token_id": 0, "bos_token_id": 0, "eos_token_id": 0}
MB_1B4_6 = dict(MB_130M, hidden_size=2048, num_hidden_layers=6, time_step_rank=128)
MB_1B4_8 = dict(MB_1B4_6, num_hidden_layers=8)
MB_2B8_4 = dict(MB_130M, hidden_size=2560, num_hidden_layers=4, time_step_rank=160)
# mistralai/Mamba-Codestral-7B-v0.1 config.json widths, 2 of 64 layers
CODESTRAL_2 = {"vocab_size": 32768, "hidden_size": 4096, "num_hidden_layers": 2, "num_heads": 128, "head_dim": 64,
               "state_size": 128, "n_groups": 8, "expand": 2, "conv_kernel": 4, "chunk_size": 256,
               "layer_norm_epsilon": 1e-5, "use_bias": False, "use_conv_bias": True, "residual_in_fp32": True,
               "rms_norm": True, "tie_word_embeddings": False, "time_step_rank": 256,
               "pad_token_id": 0, "bos_token_id": 0, "eos_token_id": 0}
# mamba2-2.7b width (d_model 2560, 80 heads of 64, one group, state 128), 3 layers
MB2_2B7_3 = dict(CODESTRAL_2, vocab_size=50288, hidden_size=2560, num_hidden_layers=3, num_heads=80, n_groups=1,
                 time_step_rank=160, tie_word_embeddings=True)

MB, MB2 = "mamba", "mamba2"


def tuning():
    return [
        training("f21-mb-130m-bf16-b2s512", hf(MB, MB_130M, "eager"), 2, 512, "bf16", "adamw", _est_gib=10),
        training("f21-mb-1b4-ampbf16-b1s1000-6l-ckpt", hf(MB, MB_1B4_6, "eager"), 1, 1000, "amp_bf16", "adamw",
                 ckpt=True, _est_gib=7),
        dict(inference("f21-mb-1b4-infer-bf16-b4s512-g16-8l", hf(MB, MB_1B4_8, "eager"), 4, 512, "bf16", 16),
             _est_gib=3),
        training("f21-mb2-cod-bf16-b1s512-2l", hf(MB2, CODESTRAL_2, "eager"), 1, 512, "bf16", "adamw", _est_gib=24),
        training("f21-mb2-cod-ampbf16-b1s300-2l-ckpt-acc2", hf(MB2, CODESTRAL_2, "eager"), 1, 300, "amp_bf16",
                 "adamw", ckpt=True, accum=2, _est_gib=22),
        dict(inference("f21-mb2-cod-infer-bf16-b1s1000-g16-2l", hf(MB2, CODESTRAL_2, "eager"), 1, 1000, "bf16", 16),
             _est_gib=30),
    ]


def holdout():
    return [
        training("f22-mb-2b8-fp32-b2s384-4l", hf(MB, MB_2B8_4, "eager"), 2, 384, "fp32", "adamw", _est_gib=9),
        training("f22-mb2-2b7-ampfp16-b1s700-3l", hf(MB2, MB2_2B7_3, "eager"), 1, 700, "amp_fp16", "adamw",
                 _est_gib=24),
        dict(inference("f22-mb-130m-infer-ampfp16-b3s1000-g24", hf(MB, MB_130M, "eager"), 3, 1000, "amp_fp16", 24),
             _est_gib=2),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
