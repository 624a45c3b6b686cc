#!/usr/bin/env python3
"""Fourth step-time set, held out (issue 17 part 3; written 2026-12-01, fifth session): writes
calibrate/cases/timing4-holdout-input.jsonl. Pre-registered: predicted by two candidate models before anything was
measured, committed, then measured by calibrate/runs/timing10_run.sh with --quiet:
  - the adopted third-round model (time-round3 mechanisms, coefficients data/calibration/time-fit-round3.json);
  - the same plus autograd's gradient sums (engine/time/step_time.cpp gradient_sums: one add kernel per gradient
    beyond a tensor's first, DenseNet's concatenations make them quadratic in a block's depth), refitted.
Held out 3 could not tell them apart (median 7.7 vs 8.2 %, host-bound rows moved by up to 1.7x between calls), so
this set leans on what separates them: DenseNets of four depths at batches where they are GPU- and host-bound, in
fp32 and amp; transformers whose per-layer sums are a larger share (small hidden sizes at long sequences); and
plain vision and transformer rows as controls. Every case is a model / setting absent from h200-timing.jsonl.
"""
import json
import os

from make_timing import tv
from make_timing3 import infer, train

HERE = os.path.dirname(os.path.abspath(__file__))

HOLD = [
    tv("hv4-densenet121-ampbf16-sgdmom-b96", "densenet121", "amp_bf16", 96),
    tv("hv4-densenet161-ampbf16-sgdmom-b32", "densenet161", "amp_bf16", 32),
    tv("hv4-densenet169-ampbf16-adamw-b48", "densenet169", "amp_bf16", 48, opt="adamw"),
    tv("hv4-densenet201-fp32-sgdmom-b16", "densenet201", "fp32", 16),
    tv("hv4-densenet201-ampbf16-sgdmom-b64", "densenet201", "amp_bf16", 64),
    tv("hv4-resnet101-ampbf16-sgdmom-b96", "resnet101", "amp_bf16", 96),
    tv("hv4-swin_t-ampbf16-adamw-b32", "swin_t", "amp_bf16", 32, opt="adamw"),
    tv("hv4-vit_b_16-ampbf16-adamw-b96", "vit_b_16", "amp_bf16", 96, opt="adamw"),
    tv("hv4-efficientnet_b2-ampbf16-sgdmom-b64", "efficientnet_b2", "amp_bf16", 64),
    tv("hv4-mobilenet_v3_large-ampbf16-sgdmom-b192", "mobilenet_v3_large", "amp_bf16", 192),
    tv("hv4-regnet_x_3_2gf-ampbf16-sgdmom-b64", "regnet_x_3_2gf", "amp_bf16", 64),
    train("hf4-l1b-ampbf16-adamw-b6s1024", "llama-3.2-1b", "amp_bf16", 6, 1024),
    train("hf4-q25_05-bf16-adamw-b12s1024", "qwen2.5-0.5b", "bf16", 12, 1024),
    train("hf4-gpt2m-ampbf16-adamwfused-b6s1024", "gpt2-medium", "amp_bf16", 6, 1024, impl="fused"),
    train("hf4-q3_06-ampbf16-adamw-b4s2048-ckpt", "qwen3-0.6b", "amp_bf16", 4, 2048, ckpt=True),
    train("hf4-olmo2_1b-bf16-adamw-b2x3s2048", "olmo-2-1b", "bf16", 2, 2048, ga=3),
    infer("hi4-l1b-infer-bf16-b16s1024-g16", "llama-3.2-1b", "bf16", 16, 1024, 16),
]

if __name__ == "__main__":
    with open(os.path.join(HERE, "timing4-holdout-input.jsonl"), "w") as f:
        for c in HOLD:
            c["holdout"] = True
            f.write(json.dumps(c) + "\n")
    print(len(HOLD))
