#!/usr/bin/env python3
"""Fourteenth step-time set, held out (issue 17 part 3; written 2026-12-02, ninth session, after checkpointing's
host cost was measured and costed): writes calibrate/cases/timing14-holdout-input.jsonl. Pre-registered: predicted
at the commit that adds it by the model that prices non-reentrant checkpointing's hooks (calibrate/ckpt_host.py,
pooled over two calls), then measured by calibrate/holdout_timing.sh with --quiet: the blind figure for that model.
Every case is a shape or setting absent from h200-timing.jsonl and most are checkpointed at small batches, where
the host's share of the step is largest: GPT-2 (pure bf16 and amp), Llama-3.2-1B, Qwen3, Phi-3-mini, Gemma-2,
Pythia, StarCoder2, OLMo-2, TinyLlama, BERT-large, a LoRA run, one plain step of the same family and one
GPU-bound checkpointed control.
"""
import os

from case_helpers import write_holdout
from make_timing3 import LLAMA_ALL, lora, train

HERE = os.path.dirname(os.path.abspath(__file__))

HOLD = [
    train("hf14-gpt2l-bf16-adamw-b4s512-ckpt", "gpt2-large", "bf16", 4, 512, ckpt=True),
    train("hf14-gpt2m-bf16-adamw-b8s512-ckpt", "gpt2-medium", "bf16", 8, 512, ckpt=True),
    train("hf14-gpt2xl-ampbf16-adamw-b1s1024-ckpt", "gpt2-xl", "amp_bf16", 1, 1024, ckpt=True),
    train("hf14-l1b-bf16-adamw-b1s1024-ckpt", "llama-3.2-1b", "bf16", 1, 1024, ckpt=True),
    train("hf14-q3_06-bf16-adamw-b2s1024-ckpt", "qwen3-0.6b", "bf16", 2, 1024, ckpt=True),
    train("hf14-q3_17-bf16-adamw-b2s1024", "qwen3-1.7b", "bf16", 2, 1024),
    train("hf14-phi3mini-bf16-adamw-b1s1024-ckpt", "phi-3-mini", "bf16", 1, 1024, ckpt=True),
    train("hf14-gemma2_2b-ampbf16-adamw-b1s2048-ckpt", "gemma-2-2b", "amp_bf16", 1, 2048, ckpt=True),
    train("hf14-pythia1_4b-bf16-adamw-b2s1024-ckpt", "pythia-1.4b", "bf16", 2, 1024, ckpt=True),
    train("hf14-starcoder2_3b-bf16-adamw-b1s2048-ckpt", "starcoder2-3b", "bf16", 1, 2048, ckpt=True),
    train("hf14-olmo2_1b-bf16-adamw-b2s2048-ckpt", "olmo-2-1b", "bf16", 2, 2048, ckpt=True),
    train("hf14-tl-ampbf16-adamw-b2s2048-ckpt", "tinyllama-1.1b", "amp_bf16", 2, 2048, ckpt=True),
    train("hf14-bertl-bf16-adamw-b16s512-ckpt", "bert-large", "bf16", 16, 512, ckpt=True),
    train("hl14-q3_17-bf16-lora16all-b2s1024-ckpt", "qwen3-1.7b", "bf16", 2, 1024, ckpt=True,
          lora=lora(16, LLAMA_ALL)),
    train("hf14-l3b-bf16-adamw-b4s2048-ckpt", "llama-3.2-3b", "bf16", 4, 2048, ckpt=True),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing14-holdout-input.jsonl"), HOLD))
