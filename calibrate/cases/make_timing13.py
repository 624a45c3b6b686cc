#!/usr/bin/env python3
"""Thirteenth step-time set, held out (issue 17 part 3; written 2026-12-02, eighth session, after held out 12 was
read): writes calibrate/cases/timing13-holdout-input.jsonl. Pre-registered: predicted at the commit that adds it by
the model with the mechanisms held out 12's profiles and microbenchmarks gave (torch._grouped_mm at its measured
rates, fp16 / fp32 grouped_mm as the per-expert loop, masked_fill with a broadcast mask, x[idx]'s backward, SDPA
with dropout), then measured by calibrate/holdout_timing.sh with --quiet: the blind figure for that model.
Every case is a shape or setting absent from h200-timing.jsonl: mixture-of-experts models at other rows per
expert, expert counts and precisions (amp runs the fp32 loop), MoE inference, the dropout models (GPT-2, BERT,
StarCoder2's masked layers) at new sizes, T5 at new lengths, Swin (its relative-position index backward).
"""
import copy
import os

from case_helpers import write_holdout
from make_timing import tv
from make_timing3 import infer, train
from make_timing12 import dsv3, layers, seq2seq

HERE = os.path.dirname(os.path.abspath(__file__))

HOLD = [
    layers(train("hm13-q3moe30-bf16-adamw-b2s4096-L3", "qwen3-30b-a3b", "bf16", 2, 4096), 3),
    layers(train("hm13-q3moe64x1024-bf16-adamw-b4s1024-L4", "qwen3-30b-a3b", "bf16", 4, 1024), 4,
           num_experts=64, moe_intermediate_size=1024),
    layers(train("hm13-dsv2lite-ampbf16-adamw-b2s2048-L3-ckpt", "deepseek-v2-lite", "amp_bf16", 2, 2048, ckpt=True), 3),
    layers(train("hm13-mixtral-bf16-adamw-b1s4096-L2", "mixtral-8x7b", "bf16", 1, 4096), 2),
    layers(train("hm13-gptoss20-ampbf16-adamw-b1s1024-L3-eager", "gpt-oss-20b", "amp_bf16", 1, 1024, attn="eager"), 3),
    dsv3("hm13-dsv3r-ampbf16-adamw-b2s2048-ckpt", "amp_bf16", 2, 2048, ckpt=True),
    layers(infer("hmi13-dsv2lite-infer-bf16-b8s1024-g8-L6", "deepseek-v2-lite", "bf16", 8, 1024, 8), 6),
    train("hf13-gpt2m-ampbf16-adamw-b12s1024", "gpt2-medium", "amp_bf16", 12, 1024),
    train("hf13-bertb-bf16-adamw-b32s512", "bert-base", "bf16", 32, 512),
    train("hf13-starcoder2_3b-ampbf16-adamw-b1s4096-ckpt", "starcoder2-3b", "amp_bf16", 1, 4096, ckpt=True),
    train("hf13-gpt2xl-bf16-adamw-b2s1024-ckpt", "gpt2-xl", "bf16", 2, 1024, ckpt=True),
    seq2seq(train("hm13-t5base-bf16-adamw-b16s512-t256", "t5-base", "bf16", 16, 512), 256),
    seq2seq(layers(train("hm13-flant5xl-ampbf16-adamw-b4s512-t128-L6", "flan-t5-xl", "amp_bf16", 4, 512), 6), 128),
    tv("hv13-swin_t-ampbf16-adamw-b96", "swin_t", "amp_bf16", 96, opt="adamw"),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing13-holdout-input.jsonl"), HOLD))
