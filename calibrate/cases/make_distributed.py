#!/usr/bin/env python3
"""Distributed per-rank cases (issue 14, 2026-12-01), measured on ONE H200 with the fake process group by
calibrate/dist_harness.py (rank 0's memory; data/validation/CASE-FORMAT.md, "Distributed cases").

Set `tuning` (measured first, with whole-run recordings, before the per-rank replay was written: the set the
replay is built against): FSDP2 on a Llama-shaped model at world 2-64, reshard true / false / int, bf16 params, fp32
params with MixedPrecisionPolicy(bf16, fp32), amp, checkpointing, a GPT-2 (tied, odd vocabulary) and a Qwen2
(tied, 152k vocabulary); DDP fp32 / bf16 with bucket_cap_mb 25 / 1, gradient_as_bucket_view, static_graph; ZeRO-1
(ZeroRedundancyOptimizer over DDP); TP 2 / 4 / 8 with and without sequence parallel (GPT-2 skipped for TP: its
Conv1D layers are no nn.Linear, which ColwiseParallel refuses); FSDP2 + TP 2D.
Set `holdout` (`d2-*`, `"holdout": true`): other models (a 6-layer 1536-wide Llama with 4 KV heads, a Mistral, an
8-layer Llama with a 32003 vocabulary, an 8-layer GPT-2 small, a tied Qwen2 1.5B-like), world 2-64 incl. 32 and 64,
reshard 2 / 8, TP 4 / 8, DDP bucket 10 / 50, ZeRO-1, 2D at 32 = 4 x 8 and 64 = 16 x 4: predicted at a named commit
before measuring (data/validation/predictions/distributed-holdout-at-7d43c1f.json); not measured yet (the device budget
ran out on 2026-12-01, see data/validation/NOTES.md).
Usage: python3 make_distributed.py tuning > distributed-tuning-input.jsonl
       python3 make_distributed.py holdout > distributed-holdout-input.jsonl"""
import json
import sys

from case_helpers import hf, training

# Llama-shaped, 4 layers of a 1B-class width; 8 KV heads and 32000 vocabulary: TP 2 / 4 / 8 divide every dim.
LL4 = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 4, "num_attention_heads": 16,
       "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 4096, "tie_word_embeddings": False}
# GPT-2 medium width, 6 layers, the real 50257 vocabulary (not a multiple of any world size: FSDP2 pads rows).
GPT2M6 = {"n_embd": 1024, "n_layer": 6, "n_head": 16, "vocab_size": 50257, "n_positions": 1024}
# Qwen2-0.5B-like (tied 151936 vocabulary, q/k/v biases), 6 layers.
QW6 = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 6, "num_attention_heads": 14,
       "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True}


def fsdp(ws, raf=True, param_dtype=None, reduce_dtype=None, tp=1, sp=False):
    d = {"strategy": "fsdp2", "world_size": ws, "reshard_after_forward": raf}
    if tp > 1:
        d["tp"] = tp
    if sp:
        d["sequence_parallel"] = True
    if param_dtype:
        d["param_dtype"] = param_dtype
    if reduce_dtype:
        d["reduce_dtype"] = reduce_dtype
    return d


def ddp(ws, bucket=25, view=False, static=False, strategy="ddp"):
    return {"strategy": strategy, "world_size": ws, "bucket_cap_mb": bucket, "gradient_as_bucket_view": view,
            "static_graph": static}


def tp(t, sp=False):
    d = {"strategy": "none", "world_size": t, "tp": t}
    if sp:
        d["sequence_parallel"] = True
    return d


def case(id, model, b, s, precision, dist, ckpt=False, optimizer="adamw", impl="foreach"):
    return training(id, model, b, s, precision, optimizer, impl=impl, ckpt=ckpt, distributed=dist)


L = hf("llama", LL4)
G = hf("gpt2", GPT2M6)
Q = hf("qwen2", QW6)
MP = {"param_dtype": "bf16", "reduce_dtype": "fp32"}

TUNING = [
    case("d1-fsdp2-ll4-bf16-w2-b2s1024", L, 2, 1024, "bf16", fsdp(2)),
    case("d1-fsdp2-ll4-bf16-w4-b2s1024", L, 2, 1024, "bf16", fsdp(4)),
    case("d1-fsdp2-ll4-bf16-w8-b2s1024", L, 2, 1024, "bf16", fsdp(8)),
    case("d1-fsdp2-ll4-bf16-w16-b2s1024", L, 2, 1024, "bf16", fsdp(16)),
    case("d1-fsdp2-ll4-bf16-w64-b2s1024", L, 2, 1024, "bf16", fsdp(64)),
    case("d1-fsdp2-ll4-bf16-w8-noreshard-b2s1024", L, 2, 1024, "bf16", fsdp(8, raf=False)),
    case("d1-fsdp2-ll4-bf16-w8-reshard4-b2s1024", L, 2, 1024, "bf16", fsdp(8, raf=4)),
    case("d1-fsdp2-ll4-mp-w8-b2s1024", L, 2, 1024, "fp32", fsdp(8, **MP)),
    case("d1-fsdp2-ll4-mp-w8-noreshard-b2s1024", L, 2, 1024, "fp32", fsdp(8, raf=False, **MP)),
    case("d1-fsdp2-ll4-bf16-w8-b4s1024-ckpt", L, 4, 1024, "bf16", fsdp(8), ckpt=True),
    case("d1-fsdp2-ll4-mp-w16-b4s1024-ckpt", L, 4, 1024, "fp32", fsdp(16, **MP), ckpt=True),
    case("d1-fsdp2-ll4-ampbf16-w4-b2s1024", L, 2, 1024, "amp_bf16", fsdp(4)),
    case("d1-fsdp2-ll4-fp32-w8-b1s1024", L, 1, 1024, "fp32", fsdp(8)),
    case("d1-fsdp2-gpt2m6-bf16-w8-b4s1024", G, 4, 1024, "bf16", fsdp(8)),
    case("d1-fsdp2-qw6-mp-w16-b4s1024-ckpt", Q, 4, 1024, "fp32", fsdp(16, **MP), ckpt=True),
    case("d1-ddp-ll4-fp32-w2-bk25-b1s1024", L, 1, 1024, "fp32", ddp(2)),
    case("d1-ddp-ll4-fp32-w8-bk1-b1s1024", L, 1, 1024, "fp32", ddp(8, bucket=1)),
    case("d1-ddp-ll4-bf16-w8-bk25-view-b2s1024", L, 2, 1024, "bf16", ddp(8, view=True)),
    case("d1-ddp-ll4-bf16-w8-bk25-static-b2s1024", L, 2, 1024, "bf16", ddp(8, static=True)),
    case("d1-ddp-gpt2m6-ampbf16-w2-bk25-b4s1024", G, 4, 1024, "amp_bf16", ddp(2)),
    case("d1-zero1-ll4-bf16-w8-b2s1024", L, 2, 1024, "bf16", ddp(8, strategy="zero1")),
    case("d1-zero1-ll4-fp32-w4-view-b1s1024", L, 1, 1024, "fp32", ddp(4, view=True, strategy="zero1")),
    case("d1-tp2-ll4-bf16-b2s1024", L, 2, 1024, "bf16", tp(2)),
    case("d1-tp4-ll4-bf16-b2s1024", L, 2, 1024, "bf16", tp(4)),
    case("d1-tp8-ll4-bf16-b2s1024", L, 2, 1024, "bf16", tp(8)),
    case("d1-tp4-ll4-bf16-sp-b2s1024", L, 2, 1024, "bf16", tp(4, sp=True)),
    case("d1-tp8-ll4-bf16-sp-b2s1024-ckpt", L, 2, 1024, "bf16", tp(8, sp=True), ckpt=True),
    case("d1-tp2-ll4-ampbf16-b2s1024", L, 2, 1024, "amp_bf16", tp(2)),
    case("d1-fsdp2tp-ll4-bf16-w8-tp2-b2s1024", L, 2, 1024, "bf16", fsdp(8, tp=2)),
    case("d1-fsdp2tp-ll4-mp-w16-tp4-sp-b2s1024", L, 2, 1024, "fp32", fsdp(16, tp=4, sp=True, **MP)),
]

# Whole-run recordings with Python frames for these (record_dist_cases.sh FRAMES_REGEX).
FRAMES = "d1-fsdp2-ll4-bf16-w8-b2s1024|d1-fsdp2-ll4-mp-w8-b2s1024|d1-ddp-ll4-bf16-w8-bk25-view|d1-tp8-ll4-bf16-b2s"

# Held-out shapes: none of these models is in the tuning set.
LL6W = {"hidden_size": 1536, "intermediate_size": 4096, "num_hidden_layers": 6, "num_attention_heads": 12,
        "num_key_value_heads": 4, "vocab_size": 32000, "tie_word_embeddings": False}
MS4 = {"hidden_size": 2048, "intermediate_size": 7168, "num_hidden_layers": 4, "num_attention_heads": 32,
       "num_key_value_heads": 8, "vocab_size": 32768, "sliding_window": None, "tie_word_embeddings": False}
# Odd vocabulary (32003 rows: uneven FSDP2 shards and padding at every world size) on a narrow 8-layer Llama.
LLODD = {"hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 8, "num_attention_heads": 16,
         "num_key_value_heads": 4, "vocab_size": 32003, "tie_word_embeddings": False}
GPT2S8 = {"n_embd": 768, "n_layer": 8, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
QW4 = {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 4, "num_attention_heads": 12,
       "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True}
W = hf("llama", LL6W)
M = hf("mistral", MS4)
O = hf("llama", LLODD)
G8 = hf("gpt2", GPT2S8)
Q4 = hf("qwen2", QW4)

HOLDOUT = [dict(c, holdout=True) for c in [
    case("d2-fsdp2-ll6w-bf16-w32-b4s1024", W, 4, 1024, "bf16", fsdp(32)),
    case("d2-fsdp2-ll6w-bf16-w64-reshard8-b2s2048", W, 2, 2048, "bf16", fsdp(64, raf=8)),
    case("d2-fsdp2-ll6w-mp-w32-b2s2048-ckpt", W, 2, 2048, "fp32", fsdp(32, **MP), ckpt=True),
    case("d2-fsdp2-ll6w-fp32-w16-b2s1024", W, 2, 1024, "fp32", fsdp(16)),
    case("d2-fsdp2-ms4-bf16-w16-noreshard-b2s1024", M, 2, 1024, "bf16", fsdp(16, raf=False)),
    case("d2-fsdp2-ms4-mp-w8-reshard2-b2s1024", M, 2, 1024, "fp32", fsdp(8, raf=2, **MP)),
    case("d2-fsdp2-llodd-bf16-w64-b4s1024", O, 4, 1024, "bf16", fsdp(64)),
    case("d2-fsdp2-llodd-mp-w32-b4s512-ckpt", O, 4, 512, "fp32", fsdp(32, **MP), ckpt=True),
    case("d2-fsdp2-gpt2s8-bf16-w32-b8s1024", G8, 8, 1024, "bf16", fsdp(32)),
    case("d2-fsdp2-gpt2s8-ampbf16-w4-b4s1024", G8, 4, 1024, "amp_bf16", fsdp(4)),
    case("d2-fsdp2-qw4-mp-w64-b2s2048-ckpt", Q4, 2, 2048, "fp32", fsdp(64, **MP), ckpt=True),
    case("d2-ddp-ms4-bf16-w4-bk10-b2s1024", M, 2, 1024, "bf16", ddp(4, bucket=10)),
    case("d2-ddp-gpt2s8-fp32-w8-bk25-view-b4s1024", G8, 4, 1024, "fp32", ddp(8, view=True)),
    case("d2-ddp-ll6w-ampbf16-w16-bk50-static-b2s1024", W, 2, 1024, "amp_bf16", ddp(16, bucket=50, static=True)),
    case("d2-zero1-ms4-bf16-w16-b2s1024", M, 2, 1024, "bf16", ddp(16, strategy="zero1")),
    case("d2-zero1-gpt2s8-fp32-w2-b4s512", G8, 4, 512, "fp32", ddp(2, strategy="zero1")),
    case("d2-tp4-ll6w-bf16-b2s2048", W, 2, 2048, "bf16", tp(4)),
    case("d2-tp8-ms4-bf16-b2s1024", M, 2, 1024, "bf16", tp(8)),
    case("d2-tp8-ms4-bf16-sp-b4s1024", M, 4, 1024, "bf16", tp(8, sp=True)),
    case("d2-tp4-ll6w-ampbf16-sp-b2s1024-ckpt", W, 2, 1024, "amp_bf16", tp(4, sp=True), ckpt=True),
    case("d2-fsdp2tp-ms4-bf16-w32-tp8-b2s1024", M, 2, 1024, "bf16", fsdp(32, tp=8)),
    case("d2-fsdp2tp-ll6w-mp-w64-tp4-sp-b2s1024-ckpt", W, 2, 1024, "fp32", fsdp(64, tp=4, sp=True, **MP), ckpt=True),
]]

if __name__ == "__main__":
    which = sys.argv[1] if len(sys.argv) > 1 else "tuning"
    for c in {"tuning": TUNING, "holdout": HOLDOUT}[which]:
        print(json.dumps(c))
