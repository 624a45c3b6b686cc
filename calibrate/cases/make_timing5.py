#!/usr/bin/env python3
"""Fifth step-time set, held out (issue 17 part 3; written 2026-12-01, fifth session, after the fourth round's
changes): writes calibrate/cases/timing5-holdout-input.jsonl. Pre-registered: predicted by the model at the commit
that adds it (the gradient sums, the short-sequence SDPA rows and the strided-copy rate included: the two last were
adopted after held out 4 was read, so only this set is blind to them), committed, then measured by
calibrate/runs/timing11_run.sh with --quiet. Every case is a model / setting absent from h200-timing.jsonl: vision
transformers and Swin at new batches (the SDPA and copy changes), conv nets in fp32 and amp, BERT, full fine-tunes
of Llama-3.2-3B and Qwen3-1.7B, GPT-2 large with SGD, a small-model decode.
"""
import json
import os

from make_timing import tv
from make_timing3 import infer, train

HERE = os.path.dirname(os.path.abspath(__file__))

HOLD = [
    tv("hv5-vit_b_32-ampbf16-adamw-b64", "vit_b_32", "amp_bf16", 64, opt="adamw"),
    tv("hv5-vit_l_16-ampbf16-adamw-b32", "vit_l_16", "amp_bf16", 32, opt="adamw"),
    tv("hv5-swin_s-ampbf16-adamw-b48", "swin_s", "amp_bf16", 48, opt="adamw"),
    tv("hv5-convnext_tiny-ampbf16-adamw-b48", "convnext_tiny", "amp_bf16", 48, opt="adamw"),
    tv("hv5-resnet50-ampbf16-sgdmom-b96", "resnet50", "amp_bf16", 96),
    tv("hv5-resnet152-fp32-sgdmom-b48", "resnet152", "fp32", 48),
    tv("hv5-efficientnet_b3-ampbf16-adamw-b48", "efficientnet_b3", "amp_bf16", 48, opt="adamw"),
    tv("hv5-densenet121-fp32-sgdmom-b32", "densenet121", "fp32", 32),
    train("hf5-bertb-ampbf16-adamw-b24s512", "bert-base", "amp_bf16", 24, 512),
    train("hf5-l3b-bf16-adamw-b2s2048-ckpt", "llama-3.2-3b", "bf16", 2, 2048, ckpt=True),
    train("hf5-q3_17-ampbf16-adamw-b2s2048", "qwen3-1.7b", "amp_bf16", 2, 2048),
    train("hf5-gpt2l-bf16-sgdmom-b8s1024", "gpt2-large", "bf16", 8, 1024, opt="sgd_momentum"),
    infer("hi5-q25_05-infer-bf16-b32s512-g16", "qwen2.5-0.5b", "bf16", 32, 512, 16),
]

if __name__ == "__main__":
    with open(os.path.join(HERE, "timing5-holdout-input.jsonl"), "w") as f:
        for c in HOLD:
            c["holdout"] = True
            f.write(json.dumps(c) + "\n")
    print(len(HOLD))
