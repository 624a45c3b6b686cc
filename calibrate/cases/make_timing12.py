#!/usr/bin/env python3
"""Twelfth step-time set, held out (issue 17 part 3; written 2026-12-02, eighth session): writes
calibrate/cases/timing12-holdout-input.jsonl. Pre-registered: predicted by the committed model (the seventh
session's final model) at the commit that adds it, then measured by calibrate/holdout_timing.sh with --quiet.

Why: h200-timing.jsonl has no row of a mixture-of-experts model (qwen3_moe, deepseek_v2 / v3, gpt_oss, mixtral)
or of T5, though memplan models all six and their memory cases are measured (h200-families.jsonl,
h200-corpus.jsonl). Their step times are extrapolations: the experts' torch._grouped_mm (transformers' default
experts implementation) has no measured rate in the model, T5's eager attention with its relative position bias
and its encoder-decoder pair were never timed. This set asks how far off those extrapolations are before any
mechanism is added for them.

Shapes: the zoo's published configs with fewer layers where the full model would not train on one H200 (the
layer is what is timed; embeddings and heads stay whole), DeepSeek-V3 at the reduced shape its memory cases use
(256 experts of 7168 do not fit), T5 at full depth. Training at batch sizes that keep the GPU busy, two
inference runs (prefill GPU-bound, decode host-bound).
"""
import copy
import json
import os

from case_helpers import write_holdout
from make_timing3 import infer, train

HERE = os.path.dirname(os.path.abspath(__file__))


def layers(case, n, **extra):
    """`case` with its config's depth set to n layers (and any other config keys given)."""
    c = copy.deepcopy(case)
    cfg = c["model"]["config"]
    key = "num_layers" if "num_layers" in cfg else "num_hidden_layers"
    cfg[key] = n
    if "num_decoder_layers" in cfg or c["model"]["model_type"] == "t5":
        cfg["num_decoder_layers"] = n
    if "layer_types" in cfg:
        cfg["layer_types"] = cfg["layer_types"][:n]
    cfg.update(extra)
    return c


def seq2seq(case, target_len):
    case["target_len"] = target_len
    return case


DSV3_REDUCED = {"source": "huggingface", "model_type": "deepseek_v3", "attn_implementation": "sdpa", "config": {
    "hidden_size": 1536, "intermediate_size": 4096, "moe_intermediate_size": 512, "num_hidden_layers": 4,
    "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 384, "q_lora_rank": 768,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 32,
    "num_experts_per_tok": 8, "n_group": 8, "topk_group": 4, "n_shared_experts": 1, "first_k_dense_replace": 2,
    "vocab_size": 50000}}


def dsv3(cid, prec, b, s, ckpt=False):
    c = train(cid, "qwen3-0.6b", prec, b, s, ckpt=ckpt)
    c["model"] = copy.deepcopy(DSV3_REDUCED)
    return c


HOLD = [
    layers(train("hm12-q3moe30-bf16-adamw-b4s2048-L4", "qwen3-30b-a3b", "bf16", 4, 2048), 4),
    layers(train("hm12-q3moe30-ampbf16-adamw-b2s2048-L3-ckpt", "qwen3-30b-a3b", "amp_bf16", 2, 2048, ckpt=True), 3),
    layers(train("hm12-dsv2lite-bf16-adamw-b2s2048-L4", "deepseek-v2-lite", "bf16", 2, 2048), 4),
    dsv3("hm12-dsv3r-bf16-adamw-b4s2048", "bf16", 4, 2048),
    layers(train("hm12-gptoss20-bf16-adamw-b1s2048-L4-eager", "gpt-oss-20b", "bf16", 1, 2048, attn="eager"), 4),
    layers(train("hm12-mixtral-bf16-adamw-b2s2048-L2", "mixtral-8x7b", "bf16", 2, 2048), 2),
    seq2seq(train("hm12-t5base-ampbf16-adamw-b16s512-t128", "t5-base", "amp_bf16", 16, 512), 128),
    seq2seq(train("hm12-t5large-bf16-adamw-b8s512-t128", "t5-large", "bf16", 8, 512), 128),
    seq2seq(layers(train("hm12-flant5xl-bf16-adamw-b8s512-t256-L6", "flan-t5-xl", "bf16", 8, 512), 6), 256),
    seq2seq(train("hm12-t5small-fp32-adamw-b32s512-t128", "t5-small", "fp32", 32, 512), 128),
    layers(infer("hmi12-q3moe30-infer-bf16-b8s1024-g8-L8", "qwen3-30b-a3b", "bf16", 8, 1024, 8), 8),
    layers(infer("hmi12-mixtral-infer-bf16-b4s2048-g8-L4", "mixtral-8x7b", "bf16", 4, 2048, 8), 4),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing12-holdout-input.jsonl"), HOLD))
