#!/usr/bin/env python3
"""Tenth step-time set, held out (issue 17 part 3; written 2026-12-02, seventh session, after held out 9 was read):
writes calibrate/cases/timing10-holdout-input.jsonl. Pre-registered: predicted by the model at the commit that adds
it (held out 9's model with binary ops of two dtypes at their measured casting-kernel rates, calibrate/
mixed_dtype.py, refit), committed, then measured by calibrate/holdout_timing.sh with --quiet: the blind figure for
the final model. Every case is a model / setting absent from h200-timing.jsonl: amp and bf16 transformers at
lengths and batches the corpus lacks, vision at large batches, two inference runs (prefill and decode).
"""
import os

from case_helpers import write_holdout
from make_timing import tv
from make_timing3 import infer, train

HERE = os.path.dirname(os.path.abspath(__file__))

HOLD = [
    train("hf10-gpt2m-ampbf16-adamw-b16s512", "gpt2-medium", "amp_bf16", 16, 512),
    train("hf10-gpt2xl-bf16-adamw-b4s1024", "gpt2-xl", "bf16", 4, 1024),
    train("hf10-bertl-bf16-adamw-b16s512", "bert-large", "bf16", 16, 512),
    train("hf10-l1b-ampbf16-adamw-b4s4096", "llama-3.2-1b", "amp_bf16", 4, 4096),
    train("hf10-q25_05-bf16-adamw-b8s4096", "qwen2.5-0.5b", "bf16", 8, 4096),
    train("hf10-gemma2_2b-bf16-adamw-b2s2048-ckpt", "gemma-2-2b", "bf16", 2, 2048, ckpt=True),
    train("hf10-olmo2_1b-ampbf16-adamw-b8s1024", "olmo-2-1b", "amp_bf16", 8, 1024),
    train("hf10-pythia1_4b-ampbf16-adamw-b4s2048-ckpt", "pythia-1.4b", "amp_bf16", 4, 2048, ckpt=True),
    tv("hv10-vit_b_16-ampbf16-adamw-b256", "vit_b_16", "amp_bf16", 256, opt="adamw"),
    tv("hv10-convnext_base-bf16-adamw-b64", "convnext_base", "bf16", 64, opt="adamw"),
    tv("hv10-swin_s-ampbf16-adamw-b64", "swin_s", "amp_bf16", 64, opt="adamw"),
    tv("hv10-efficientnet_b0-ampbf16-sgdmom-b256", "efficientnet_b0", "amp_bf16", 256),
    infer("hi10-l1b-infer-bf16-b8s4096-g8", "llama-3.2-1b", "bf16", 8, 4096, 8),
    infer("hi10-q3_06-infer-bf16-b32s1024-g8", "qwen3-0.6b", "bf16", 32, 1024, 8),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing10-holdout-input.jsonl"), HOLD))
