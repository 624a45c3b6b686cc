#!/usr/bin/env python3
"""Odd shapes, set 2 (2026-12-01, issue 17 part 1): HELD OUT, predicted at a named commit before measuring, after the
load-path mechanism (RunConfig::weights_load, generate_first) set 1 / 1t found. Cases carry neither `load` nor
`generate_first`: they run with the defaults (the model built on the CPU and moved, generate() first). Small models
only (a CPU build of a large one takes minutes), odd batches, lengths and vocabularies none of set 1 used.
Usage: python3 make_odd_shapes2.py > odd-shapes2-input.jsonl"""
import json

from case_helpers import hf, inference, training, vision

tr = training
GPT2S = {"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
GPT2_V50304 = {"n_embd": 1024, "n_layer": 6, "n_head": 16, "vocab_size": 50304, "n_positions": 2048}
LLAMA_T = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 4, "num_attention_heads": 32,
           "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 4096,
           "tie_word_embeddings": True}
QWEN2_05 = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 8, "num_attention_heads": 14,
            "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True,
            "max_position_embeddings": 32768}
MISTRAL2 = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 2, "num_attention_heads": 32,
            "num_key_value_heads": 8, "vocab_size": 32768, "max_position_embeddings": 8192, "sliding_window": None}
LLAMA_V49999 = {"hidden_size": 1536, "intermediate_size": 4096, "num_hidden_layers": 4, "num_attention_heads": 12,
                "num_key_value_heads": 4, "vocab_size": 49999, "max_position_embeddings": 4096}

CASES = [
    tr("odd2-gpt2s-ampbf16-adamw-b5s1000", hf("gpt2", GPT2S), 5, 1000, "amp_bf16", "adamw"),
    tr("odd2-gpt2s-ampfp16-adamw-b3s1024-a3", hf("gpt2", GPT2S), 3, 1024, "amp_fp16", "adamw", accum=3),
    tr("odd2-gpt2v50304-fp32-adamw-b6s1500-ckpt", hf("gpt2", GPT2_V50304), 6, 1500, "fp32", "adamw", ckpt=True),
    tr("odd2-llamat-ampbf16-adamw-b12s1000", hf("llama", LLAMA_T), 12, 1000, "amp_bf16", "adamw"),
    tr("odd2-llamat-bf16-adamw-b10s1500-ckpt", hf("llama", LLAMA_T), 10, 1500, "bf16", "adamw", ckpt=True),
    tr("odd2-qwen2-05-ampbf16-adamw-b6s3000-ckpt", hf("qwen2", QWEN2_05), 6, 3000, "amp_bf16", "adamw", ckpt=True),
    tr("odd2-qwen2-05-ampfp16-sgdmom-b24s100-a2", hf("qwen2", QWEN2_05), 24, 100, "amp_fp16", "sgd_momentum",
       accum=2),
    tr("odd2-llamav49999-bf16-adamw-b5s3000", hf("llama", LLAMA_V49999), 5, 3000, "bf16", "adamw"),
    inference("odd2-qwen2-05-infer-bf16-b6s1500-g20", hf("qwen2", QWEN2_05), 6, 1500, "bf16", 20),
    inference("odd2-gpt2s-infer-ampbf16-b10s1000-g12", hf("gpt2", GPT2S), 10, 1000, "amp_bf16", 12),
    inference("odd2-llamat-infer-bf16-b12s100-g40", hf("llama", LLAMA_T), 12, 100, "bf16", 40),
    inference("odd2-mistral2-infer-bf16-b3s3000-g16", hf("mistral", MISTRAL2), 3, 3000, "bf16", 16),
]

if __name__ == "__main__":
    for c in CASES:
        c["holdout"] = True
        print(json.dumps(c))
