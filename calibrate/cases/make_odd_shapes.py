#!/usr/bin/env python3
"""Odd shapes, set 1 (2026-12-01, issue 17 part 1): reserved memory where tensors land next to the caching
allocator's rounding and split boundaries. Tuning set: the five hidden-set misses the issue names (GPT-2 small amp
bf16 b10 s1024; Qwen2-7B inference b16 s2048 + 32 tokens; GPT-2 medium fp32 inference b32 s512 + 16; Llama-3.2-3B
amp bf16 + checkpointing b2 s2048; Llama-3.2-1B amp fp16 x2 accumulation b4 s1024) and neighbours of each with
batch sizes 3, 5, 6, 10, 12, 24, lengths 100, 1000, 1500, 3000 and unusual vocabularies, every one recorded
allocator event by event. Usage: python3 make_odd_shapes.py [--to-device] > odd-shapes1[t]-input.jsonl
(--to-device: set 1t, the
same cases built on the CPU and moved, inference with generate() first: what the issue's hidden set measured)"""
import json

from case_helpers import hf, inference, training, vision

tr = training
GPT2S = {"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
GPT2S_LONG = dict(GPT2S, n_positions=2048)
GPT2M = {"n_embd": 1024, "n_layer": 24, "n_head": 16, "vocab_size": 50257, "n_positions": 1024}
QWEN2_7B = {"hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
            "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768,
            "tie_word_embeddings": False}
LLAMA32_3B = {"hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 28, "num_attention_heads": 24,
              "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 128256, "tie_word_embeddings": True,
              "max_position_embeddings": 8192, "rope_theta": 500000.0}
LLAMA32_1B = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
              "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256, "tie_word_embeddings": True,
              "max_position_embeddings": 8192, "rope_theta": 500000.0}
LLAMA_V32001 = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 6, "num_attention_heads": 32,
                "num_key_value_heads": 4, "vocab_size": 32001, "max_position_embeddings": 4096}
MISTRAL4 = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 4, "num_attention_heads": 32,
            "num_key_value_heads": 8, "vocab_size": 32768, "max_position_embeddings": 8192, "sliding_window": None}
QWEN2_15 = {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
            "num_key_value_heads": 2, "vocab_size": 151646, "max_position_embeddings": 32768,
            "tie_word_embeddings": True}

CASES = [
    # the five
    tr("odd1-gpt2s-ampbf16-adamw-b10s1024", hf("gpt2", GPT2S), 10, 1024, "amp_bf16", "adamw"),
    inference("odd1-qwen2-7b-infer-bf16-b16s2048-g32", hf("qwen2", QWEN2_7B), 16, 2048, "bf16", 32),
    inference("odd1-gpt2m-infer-fp32-b32s512-g16", hf("gpt2", GPT2M), 32, 512, "fp32", 16),
    tr("odd1-llama32-3b-ampbf16-adamw-b2s2048-ckpt", hf("llama", LLAMA32_3B), 2, 2048, "amp_bf16", "adamw",
       ckpt=True),
    tr("odd1-llama32-1b-ampfp16-adamw-b4s1024-a2", hf("llama", LLAMA32_1B), 4, 1024, "amp_fp16", "adamw", accum=2),
    # neighbours
    tr("odd1-gpt2s-ampbf16-adamw-b6s1000", hf("gpt2", GPT2S), 6, 1000, "amp_bf16", "adamw"),
    tr("odd1-gpt2s-ampbf16-adamw-b12s1024", hf("gpt2", GPT2S), 12, 1024, "amp_bf16", "adamw"),
    tr("odd1-gpt2s-fp32-adamw-b5s1500", hf("gpt2", GPT2S_LONG), 5, 1500, "fp32", "adamw"),
    tr("odd1-gpt2s-ampfp16-adamw-b24s100", hf("gpt2", GPT2S), 24, 100, "amp_fp16", "adamw"),
    tr("odd1-gpt2m-fp32-adamw-b3s1000", hf("gpt2", GPT2M), 3, 1000, "fp32", "adamw"),
    tr("odd1-gpt2m-ampbf16-adamw-b10s1024-ckpt", hf("gpt2", GPT2M), 10, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("odd1-llama32-1b-ampfp16-adamw-b3s1500-a3", hf("llama", LLAMA32_1B), 3, 1500, "amp_fp16", "adamw", accum=3),
    tr("odd1-llama32-1b-bf16-adamw-b6s1000", hf("llama", LLAMA32_1B), 6, 1000, "bf16", "adamw"),
    tr("odd1-llama32-1b-ampbf16-adamw-b5s1024-ckpt", hf("llama", LLAMA32_1B), 5, 1024, "amp_bf16", "adamw",
       ckpt=True),
    tr("odd1-llama32-3b-bf16-adamw-b3s1000-ckpt", hf("llama", LLAMA32_3B), 3, 1000, "bf16", "adamw", ckpt=True),
    tr("odd1-llamav32001-ampbf16-adamw-b5s1500", hf("llama", LLAMA_V32001), 5, 1500, "amp_bf16", "adamw"),
    tr("odd1-llamav32001-ampfp16-sgdmom-b12s1000-a2", hf("llama", LLAMA_V32001), 12, 1000, "amp_fp16",
       "sgd_momentum", accum=2),
    tr("odd1-mistral4-bf16-adamw-b10s3000-ckpt", hf("mistral", MISTRAL4), 10, 3000, "bf16", "adamw", ckpt=True),
    tr("odd1-qwen2-15-ampbf16-adamw-b6s1000-ckpt", hf("qwen2", QWEN2_15), 6, 1000, "amp_bf16", "adamw", ckpt=True),
    inference("odd1-qwen2-15-infer-bf16-b5s3000-g16", hf("qwen2", QWEN2_15), 5, 3000, "bf16", 16),
    inference("odd1-llama32-1b-infer-bf16-b3s1000-g24", hf("llama", LLAMA32_1B), 3, 1000, "bf16", 24),
    inference("odd1-gpt2s-infer-fp32-b12s100-g50", hf("gpt2", GPT2S), 12, 100, "fp32", 50),
    inference("odd1-gpt2m-infer-ampbf16-b24s1000-g8", hf("gpt2", GPT2M), 24, 1000, "amp_bf16", 8),
    inference("odd1-llama32-3b-infer-bf16-b10s1500-g32", hf("llama", LLAMA32_3B), 10, 1500, "bf16", 32),
    vision("odd1-resnet50-ampbf16-sgdmom-b24", "resnet50", 24, "amp_bf16", "sgd_momentum"),
    vision("odd1-vit_b_16-ampbf16-adamw-b10", "vit_b_16", 10, "amp_bf16", "adamw"),
]


def to_device(c):
    """The same case driven as a user script drives it: the model built on the CPU in the case's dtype and moved with
    model.to("cuda"); inference runs generate() first (CASE-FORMAT.md `load`, `generate_first`)."""
    d = dict(c, id=c["id"].replace("odd1-", "odd1t-", 1), load="to_device")
    if d["mode"] == "inference":
        d["generate_first"] = True
    return d


if __name__ == "__main__":
    import sys
    for c in CASES:
        print(json.dumps(to_device(c) if "--to-device" in sys.argv else c))
