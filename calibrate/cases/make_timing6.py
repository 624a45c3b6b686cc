#!/usr/bin/env python3
"""Sixth step-time set, held out (issue 17 part 3; written 2026-12-02, sixth session): writes
calibrate/cases/timing6-holdout-input.jsonl. Pre-registered: predicted by three models before it is measured
(data/validation/predictions/timing6-holdout.json): the committed one (M0), the fit anchored to the profiled steps'
kernel time per class (M1: gemm, attention and elementwise coefficients held to what the tuning profiles' kernels
took), and M1 with broadcast binary ops at their measured rate (M2). Then measured by calibrate/runs/timing13_run.sh with
--quiet. The set leans on GPU-bound steps (they repeat within 1 % between device calls, so they can tell models
apart; host-bound rows move up to 1.9x with the host) and on shapes the tuning set lacks: sequences of 4096 and
8192 (attention's share grows with S: the fitted attention coefficient matters most there), pure bf16 and amp
versions of small-vocabulary-heavy models, LoRA at a long sequence, long prefills, vision at large batches.
"""
import json
import os

from make_timing import tv
from make_timing3 import LLAMA_ALL, infer, lora, train

HERE = os.path.dirname(os.path.abspath(__file__))

HOLD = [
    train("hf6-l1b-bf16-adamw-b1s8192", "llama-3.2-1b", "bf16", 1, 8192),
    train("hf6-q3_06-bf16-adamw-b2s4096", "qwen3-0.6b", "bf16", 2, 4096),
    train("hf6-q25_05-ampbf16-adamw-b4s4096", "qwen2.5-0.5b", "amp_bf16", 4, 4096),
    train("hf6-gemma3_1b-bf16-adamw-b4s2048", "gemma-3-1b", "bf16", 4, 2048),
    train("hf6-olmo2_1b-ampbf16-adamw-b4s2048", "olmo-2-1b", "amp_bf16", 4, 2048),
    train("hf6-pythia1_4b-bf16-adamw-b4s2048", "pythia-1.4b", "bf16", 4, 2048),
    train("hf6-phi3mini-bf16-adamw-b1s4096-ckpt", "phi-3-mini", "bf16", 1, 4096, ckpt=True),
    train("hf6-tl-ampbf16-adamw-b2s4096", "tinyllama-1.1b", "amp_bf16", 2, 4096),
    train("hf6-gpt2m-ampbf16-adamw-b16s1024", "gpt2-medium", "amp_bf16", 16, 1024),
    train("hf6-bertl-bf16-adamw-b32s512", "bert-large", "bf16", 32, 512),
    train("hl6-q3_17-bf16-lora16all-b2s4096", "qwen3-1.7b", "bf16", 2, 4096, lora=lora(16, LLAMA_ALL)),
    infer("hi6-l3b-infer-bf16-b4s4096-g8", "llama-3.2-3b", "bf16", 4, 4096, 8),
    infer("hi6-q3_06-infer-bf16-b16s2048-g8", "qwen3-0.6b", "bf16", 16, 2048, 8),
    tv("hv6-vit_b_16-ampbf16-adamw-b192", "vit_b_16", "amp_bf16", 192, opt="adamw"),
    tv("hv6-resnet50-ampbf16-sgdmom-b256", "resnet50", "amp_bf16", 256),
    tv("hv6-convnext_tiny-ampbf16-adamw-b192", "convnext_tiny", "amp_bf16", 192, opt="adamw"),
]

if __name__ == "__main__":
    with open(os.path.join(HERE, "timing6-holdout-input.jsonl"), "w") as f:
        for c in HOLD:
            c["holdout"] = True
            f.write(json.dumps(c) + "\n")
    print(len(HOLD))
