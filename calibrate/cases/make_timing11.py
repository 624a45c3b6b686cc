#!/usr/bin/env python3
"""Eleventh step-time set, held out (issue 17 part 3; written 2026-12-02, seventh session, after held out 10 was read):
writes calibrate/cases/timing11-holdout-input.jsonl. Pre-registered: predicted by the model at the commit that adds
it (held out 10's model with the reductions autograd runs for broadcast operands' gradients at their measured
times by row length, refit), committed, then measured by calibrate/holdout_timing.sh with --quiet: the blind figure
for the final model. Every case is a model / setting absent from h200-timing.jsonl, leaning on RMSNorm models in
amp and bf16 (where those reductions are), with LayerNorm models, vision and one inference run.
"""
import os

from case_helpers import write_holdout
from make_timing import tv
from make_timing3 import infer, train

HERE = os.path.dirname(os.path.abspath(__file__))

HOLD = [
    train("hf11-q3_06-ampbf16-adamw-b4s2048", "qwen3-0.6b", "amp_bf16", 4, 2048),
    train("hf11-q3_17-ampbf16-adamw-b2s2048-ckpt", "qwen3-1.7b", "amp_bf16", 2, 2048, ckpt=True),
    train("hf11-q3_4b-bf16-adamw-b1s2048-ckpt", "qwen3-4b", "bf16", 1, 2048, ckpt=True),
    train("hf11-l1b-ampbf16-adamw-b16s1024", "llama-3.2-1b", "amp_bf16", 16, 1024),
    train("hf11-tl-ampbf16-adamw-b4s2048", "tinyllama-1.1b", "amp_bf16", 4, 2048),
    train("hf11-phi3mini-bf16-adamw-b2s2048-ckpt", "phi-3-mini", "bf16", 2, 2048, ckpt=True),
    train("hf11-gemma3_1b-ampbf16-adamw-b4s2048", "gemma-3-1b", "amp_bf16", 4, 2048),
    train("hf11-olmo2_1b-ampbf16-adamw-b4s4096", "olmo-2-1b", "amp_bf16", 4, 4096),
    train("hf11-q25_05-ampbf16-adamw-b8s1024-ckpt", "qwen2.5-0.5b", "amp_bf16", 8, 1024, ckpt=True),
    train("hf11-gpt2l-ampbf16-adamw-b4s1024", "gpt2-large", "amp_bf16", 4, 1024),
    train("hf11-bertl-ampbf16-adamw-b8s512", "bert-large", "amp_bf16", 8, 512),
    tv("hv11-convnext_tiny-ampbf16-adamw-b96", "convnext_tiny", "amp_bf16", 96, opt="adamw"),
    tv("hv11-vit_l_16-ampbf16-adamw-b128", "vit_l_16", "amp_bf16", 128, opt="adamw"),
    infer("hi11-q3_17-infer-bf16-b8s2048-g8", "qwen3-1.7b", "bf16", 8, 2048, 8),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing11-holdout-input.jsonl"), HOLD))
