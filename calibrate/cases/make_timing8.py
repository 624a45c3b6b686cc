#!/usr/bin/env python3
"""Eighth step-time set, held out (issue 17 part 3; written 2026-12-02, seventh session): writes
calibrate/cases/timing8-holdout-input.jsonl. Pre-registered: predicted by the model at the commit that adds it
(LayerNorm and the bias gradients' column sums at their measured times by row length, torch.roll at its profiled
per-element time, the fit redone with them: found on the profiles of held out 7's misses, so this set is the first
blind to them), committed, then measured by calibrate/holdout_timing.sh with --quiet. Every case is a model /
setting absent from h200-timing.jsonl: ConvNeXt / Swin / ViT at batch sizes and widths the corpus lacks (rows of
96 .. 1536 channels), a pure-bf16 vision transformer (bf16 LayerNorm rows), transformers with LayerNorm and biased
linears (GPT-2, BERT, Pythia, StarCoder2), and RMSNorm transformers whose backward coefficient moved with the fit.
"""
import os

from case_helpers import write_holdout
from make_timing import tv
from make_timing3 import train

HERE = os.path.dirname(os.path.abspath(__file__))

HOLD = [
    tv("hv8-convnext_tiny-ampbf16-adamw-b256", "convnext_tiny", "amp_bf16", 256, opt="adamw"),
    tv("hv8-convnext_base-ampbf16-adamw-b96", "convnext_base", "amp_bf16", 96, opt="adamw"),
    tv("hv8-convnext_large-ampbf16-adamw-b48", "convnext_large", "amp_bf16", 48, opt="adamw"),
    tv("hv8-swin_s-ampbf16-adamw-b96", "swin_s", "amp_bf16", 96, opt="adamw"),
    tv("hv8-swin_b-ampbf16-adamw-b64", "swin_b", "amp_bf16", 64, opt="adamw"),
    tv("hv8-vit_b_16-ampbf16-adamw-b128", "vit_b_16", "amp_bf16", 128, opt="adamw"),
    tv("hv8-vit_l_16-bf16-adamw-b48", "vit_l_16", "bf16", 48, opt="adamw"),
    train("hf8-gpt2m-bf16-adamw-b16s1024", "gpt2-medium", "bf16", 16, 1024),
    train("hf8-bertl-ampbf16-adamw-b32s512", "bert-large", "amp_bf16", 32, 512),
    train("hf8-pythia1_4b-ampbf16-adamw-b8s2048", "pythia-1.4b", "amp_bf16", 8, 2048),
    train("hf8-starcoder2_3b-bf16-adamw-b2s2048", "starcoder2-3b", "bf16", 2, 2048),
    train("hf8-q3_17-bf16-adamw-b4s2048", "qwen3-1.7b", "bf16", 4, 2048),
    train("hf8-l3b-ampbf16-adamw-b4s2048-ckpt", "llama-3.2-3b", "amp_bf16", 4, 2048, ckpt=True),
    train("hf8-gemma2_2b-ampbf16-adamw-b4s1024", "gemma-2-2b", "amp_bf16", 4, 1024),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing8-holdout-input.jsonl"), HOLD))
