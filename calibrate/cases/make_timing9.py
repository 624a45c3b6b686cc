#!/usr/bin/env python3
"""Ninth step-time set, held out (issue 17 part 3; written 2026-12-02, seventh session, after held out 8 was read):
writes calibrate/cases/timing9-holdout-input.jsonl. Pre-registered: predicted by the model at the commit that adds
it (held out 8's model with the elementwise bandwidth taken from the streaming kernels only, found on held out 8's
pure-bf16 GPT-2 after it was read, refit), committed, then measured by calibrate/holdout_timing.sh with --quiet:
the blind figure for the final model. Every case is a model / setting absent from h200-timing.jsonl: LayerNorm
models at widths and batches the corpus lacks, pure-bf16 vision and GPT-2 / BERT / Pythia steps (bf16 streaming
kernels), RMSNorm transformers.
"""
import os

from case_helpers import write_holdout
from make_timing import tv
from make_timing3 import train

HERE = os.path.dirname(os.path.abspath(__file__))

HOLD = [
    tv("hv9-convnext_small-ampbf16-adamw-b192", "convnext_small", "amp_bf16", 192, opt="adamw"),
    tv("hv9-convnext_tiny-bf16-adamw-b128", "convnext_tiny", "bf16", 128, opt="adamw"),
    tv("hv9-swin_t-ampbf16-adamw-b192", "swin_t", "amp_bf16", 192, opt="adamw"),
    tv("hv9-swin_v2_t-ampbf16-adamw-b96", "swin_v2_t", "amp_bf16", 96, opt="adamw"),
    tv("hv9-vit_b_16-bf16-adamw-b96", "vit_b_16", "bf16", 96, opt="adamw"),
    tv("hv9-vit_b_32-ampbf16-adamw-b512", "vit_b_32", "amp_bf16", 512, opt="adamw"),
    tv("hv9-resnet50-bf16-sgdmom-b256", "resnet50", "bf16", 256),
    train("hf9-gpt2-bf16-adamw-b32s1024", "gpt2", "bf16", 32, 1024),
    train("hf9-gpt2l-bf16-adamw-b8s1024", "gpt2-large", "bf16", 8, 1024),
    train("hf9-bertb-ampbf16-adamw-b64s512", "bert-base", "amp_bf16", 64, 512),
    train("hf9-pythia1_4b-bf16-adamw-b8s2048", "pythia-1.4b", "bf16", 8, 2048),
    train("hf9-starcoder2_3b-ampbf16-adamw-b2s2048", "starcoder2-3b", "amp_bf16", 2, 2048),
    train("hf9-q25_05-ampbf16-adamw-b16s2048", "qwen2.5-0.5b", "amp_bf16", 16, 2048),
    train("hf9-olmo2_1b-bf16-adamw-b8s2048", "olmo-2-1b", "bf16", 8, 2048),
    train("hf9-l1b-bf16-adamw-b8s2048-ckpt", "llama-3.2-1b", "bf16", 8, 2048, ckpt=True),
    train("hf9-q3_06-bf16-adamw-b16s2048", "qwen3-0.6b", "bf16", 16, 2048),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing9-holdout-input.jsonl"), HOLD))
