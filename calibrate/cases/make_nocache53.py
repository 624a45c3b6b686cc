#!/usr/bin/env python3
"""Held-out set 53: generate() without a KV cache. A config saved with "use_cache": false (as fine-tuning scripts
that turned on gradient checkpointing leave it, and as MPT-7B ships) makes transformers' generate() run without a
cache: every token re-runs the whole sequence. memplan replays that loop for gpt2, llama / mistral / qwen2, qwen3,
gpt_neox, phi3, opt and mpt (engine/inference_replay.h no_cache_generate_modelled); this set checks it on shapes no
earlier measurement saw, predicted before any device ran it. One row is the cached control of another (use_cache
left true). Configs are the zoo's published ones (models/zoo/*.json), cut in depth where noted.
Usage: python3 calibrate/cases/make_nocache53.py > calibrate/cases/nocache53-input.jsonl"""
import json
import os

from case_helpers import cap_copies, held_out, hf, inference

ZOO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "zoo")
CAP_LO, CAP_HI = 2.55, 4.25  # the uncapped first row predicted 2714.4 MiB allocated, 4196 reserved (this commit)


def zoo(name, **over):
    with open(os.path.join(ZOO, name + ".json")) as f:
        cfg = json.load(f)
    for k in ("architectures", "model_type", "torch_dtype", "dtype", "transformers_version", "auto_map"):
        cfg.pop(k, None)
    cfg.update(over)
    return cfg


def row(id_, model_type, cfg, b, seq, prec, gen, attn="sdpa", use_cache=False, cap=None):
    cfg = dict(cfg, use_cache=use_cache)
    return held_out(inference(id_, hf(model_type, cfg, attn), b, seq, prec, gen), cap)


L1B8 = zoo("llama-3.2-1b", num_hidden_layers=8)
FIRST = ("nc53-l1b8l-bf16-b16s1000-g16", "llama", L1B8, 16, 1000, "bf16", 16)
rows = [
    row(*FIRST),
    row("nc53-l1b8l-bf16-b16s1000-g16-cached", "llama", L1B8, 16, 1000, "bf16", 16, use_cache=True),
    row("nc53-gpt2-bf16-b8s512-g16", "gpt2", zoo("gpt2"), 8, 512, "bf16", 16),
    row("nc53-gpt2m-fp32-eager-b8s600-g12", "gpt2", zoo("gpt2-medium"), 8, 600, "fp32", 12, attn="eager"),
    row("nc53-q3-06-bf16-eager-b6s1200-g10", "qwen3", zoo("qwen3-0.6b"), 6, 1200, "bf16", 10, attn="eager"),
    row("nc53-q3-06-fp16-b5s333-g30", "qwen3", zoo("qwen3-0.6b"), 5, 333, "fp16", 30),
    row("nc53-pythia14-6l-bf16-b6s500-g20", "gpt_neox", zoo("pythia-1.4b", num_hidden_layers=6), 6, 500, "bf16", 20),
    row("nc53-phi3mini4l-bf16-b2s1500-g8", "phi3", zoo("phi-3-mini", num_hidden_layers=4), 2, 1500, "bf16", 8),
    row("nc53-opt125-fp32-b8s256-g24", "opt", zoo("opt-125m"), 8, 256, "fp32", 24),
    row("nc53-mpt7b2l-bf16-b2s1500-g8", "mpt", zoo("mpt-7b", n_layers=2), 2, 1500, "bf16", 8, attn="eager"),
] + cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
