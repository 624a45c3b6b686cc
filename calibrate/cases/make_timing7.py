#!/usr/bin/env python3
"""Seventh step-time set, held out (issue 17 part 3; written 2026-12-02, sixth session, after the fifth round's
changes): writes calibrate/cases/timing7-holdout-input.jsonl. Pre-registered: predicted by the model at the commit
that adds it (the profile-anchored fit, broadcast ops, masked SDPA, LayerNorm copies and the idle-time gap anchor:
the last three were found on held out 6 after it was read, so this set is the first blind to them), committed, then
measured by calibrate/runs/timing17_run.sh with --quiet. Every case is a model / setting absent from h200-timing.jsonl:
sliding-window attention at and past its window (Gemma-2, StarCoder2, Phi-3 LoRA and prefill), Gemma-3 prefill,
vision transformers and ConvNeXt / Swin at large batches (the copies), transformers in amp and bf16.
"""
import json
import os

from make_timing import tv
from make_timing3 import LLAMA_ALL, infer, lora, train

HERE = os.path.dirname(os.path.abspath(__file__))

HOLD = [
    train("hf7-gemma2_2b-bf16-adamw-b1s4096-ckpt", "gemma-2-2b", "bf16", 1, 4096, ckpt=True),
    train("hf7-starcoder2_3b-bf16-adamw-b1s4096-ckpt", "starcoder2-3b", "bf16", 1, 4096, ckpt=True),
    train("hl7-phi3mini-bf16-lora16all-b2s4096-ckpt", "phi-3-mini", "bf16", 2, 4096, ckpt=True,
          lora=lora(16, ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"])),
    train("hf7-l1b-ampbf16-adamw-b8s2048", "llama-3.2-1b", "amp_bf16", 8, 2048),
    train("hf7-tl-bf16-adamw-b4s4096-ckpt", "tinyllama-1.1b", "bf16", 4, 4096, ckpt=True),
    train("hf7-q25_05-bf16-adamw-b16s2048", "qwen2.5-0.5b", "bf16", 16, 2048),
    train("hf7-bertb-bf16-adamw-b64s512", "bert-base", "bf16", 64, 512),
    infer("hi7-phi3mini-infer-bf16-b4s4096-g8", "phi-3-mini", "bf16", 4, 4096, 8),
    infer("hi7-gemma3_1b-infer-bf16-b8s2048-g8", "gemma-3-1b", "bf16", 8, 2048, 8),
    tv("hv7-vit_l_16-ampbf16-adamw-b64", "vit_l_16", "amp_bf16", 64, opt="adamw"),
    tv("hv7-vit_b_32-ampbf16-adamw-b256", "vit_b_32", "amp_bf16", 256, opt="adamw"),
    tv("hv7-convnext_small-ampbf16-adamw-b128", "convnext_small", "amp_bf16", 128, opt="adamw"),
    tv("hv7-swin_t-ampbf16-adamw-b128", "swin_t", "amp_bf16", 128, opt="adamw"),
    tv("hv7-resnet152-ampbf16-sgdmom-b128", "resnet152", "amp_bf16", 128),
]

if __name__ == "__main__":
    with open(os.path.join(HERE, "timing7-holdout-input.jsonl"), "w") as f:
        for c in HOLD:
            c["holdout"] = True
            f.write(json.dumps(c) + "\n")
    print(len(HOLD))
