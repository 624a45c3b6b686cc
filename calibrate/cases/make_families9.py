#!/usr/bin/env python3
"""Family set 9 (2026-12-03, twelfth session): smollm3, distilbert, gpt_bigcode, falcon (two more rows), olmoe,
gptj (eager: transformers 5.17 refuses SDPA for it), bloom, glm4, nemotron and olmo, measured before any of them
was modelled: the tuning rows the builders are written against. A held-out set on other shapes follows, predicted
before it is measured. Shapes follow published checkpoints' widths with few layers (SmolLM3-3B, distilbert-base,
SantaCoder, Falcon-7B / 40B, OLMoE-1B-7B, GPT-J-6B, BLOOM-560M, GLM-4-9B, Minitron-4B, OLMo-1B / 7B-0424), the
options that change what the forward saves switched on in one case each. Bloom is asked for with SDPA once: if
5.17 refuses it there, that row fails and the eager rows stand.
Usage: python3 make_families9.py > families9-input.jsonl"""
import json

from case_helpers import hf, inference, training

tr = training
SMOLLM3 = {"hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 4, "num_attention_heads": 16,
           "num_key_value_heads": 4, "vocab_size": 128256, "tie_word_embeddings": True}
DISTILBERT = {"dim": 768, "hidden_dim": 3072, "n_layers": 6, "n_heads": 12, "vocab_size": 30522}
BIGCODE = {"n_embd": 2048, "n_layer": 4, "n_head": 16, "vocab_size": 49280, "n_positions": 2048,
           "multi_query": True}
FALCON = {"hidden_size": 4544, "num_hidden_layers": 2, "num_attention_heads": 71, "vocab_size": 65024,
          "multi_query": True, "parallel_attn": True, "bias": False, "new_decoder_architecture": False}
FALCON40 = {"hidden_size": 8192, "num_hidden_layers": 2, "num_attention_heads": 128, "num_kv_heads": 8,
            "vocab_size": 65024, "parallel_attn": True, "bias": False, "new_decoder_architecture": True}
OLMOE = {"hidden_size": 2048, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 16,
         "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 50304}
GPTJ = {"n_embd": 4096, "n_layer": 2, "n_head": 16, "rotary_dim": 64, "vocab_size": 50400, "n_positions": 2048}
BLOOM = {"hidden_size": 1024, "n_layer": 4, "n_head": 16, "vocab_size": 250880}
GLM4 = {"hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 2, "num_attention_heads": 32,
        "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 151552, "attention_bias": True}
NEMOTRON = {"hidden_size": 3072, "intermediate_size": 9216, "num_hidden_layers": 2, "num_attention_heads": 24,
            "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 256000}
OLMO = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 4, "num_attention_heads": 16,
        "vocab_size": 50304}
OLMO_CLIP = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 2, "num_attention_heads": 32,
             "vocab_size": 50304, "clip_qkv": 8.0}

CASES = [
    tr("f9-smollm3-bf16-adamw-b2s2048", hf("smollm3", SMOLLM3), 2, 2048, "bf16", "adamw"),
    tr("f9-smollm3-ampbf16-adamw-b2s1024-ckpt", hf("smollm3", SMOLLM3), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f9-smollm3-fp32-adamw-b1s512-eager", hf("smollm3", SMOLLM3, "eager"), 1, 512, "fp32", "adamw"),
    inference("f9-smollm3-infer-bf16-b4s1024-g8", hf("smollm3", SMOLLM3), 4, 1024, "bf16", 8),
    tr("f9-distilbert-fp32-adamw-b16s512", hf("distilbert", DISTILBERT), 16, 512, "fp32", "adamw"),
    tr("f9-distilbert-ampbf16-adamw-b32s256", hf("distilbert", DISTILBERT), 32, 256, "amp_bf16", "adamw"),
    tr("f9-distilbert-bf16-adamw-b8s512-eager", hf("distilbert", DISTILBERT, "eager"), 8, 512, "bf16", "adamw"),
    tr("f9-bigcode-bf16-adamw-b4s1024", hf("gpt_bigcode", BIGCODE), 4, 1024, "bf16", "adamw"),
    tr("f9-bigcode-ampbf16-adamw-b4s1024-ckpt", hf("gpt_bigcode", BIGCODE), 4, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f9-bigcode-fp32-adamw-b2s512-eager", hf("gpt_bigcode", BIGCODE, "eager"), 2, 512, "fp32", "adamw"),
    inference("f9-bigcode-infer-bf16-b4s1024-g8", hf("gpt_bigcode", BIGCODE), 4, 1024, "bf16", 8),
    tr("f9-falcon40-ampbf16-adamw-b2s1024-ckpt", hf("falcon", FALCON40), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f9-falcon-fp32-adamw-b1s512-eager", hf("falcon", FALCON, "eager"), 1, 512, "fp32", "adamw"),
    inference("f9-falcon40-infer-bf16-b2s1024-g8", hf("falcon", FALCON40), 2, 1024, "bf16", 8),
    tr("f9-olmoe-bf16-adamw-b2s1024", hf("olmoe", OLMOE), 2, 1024, "bf16", "adamw"),
    tr("f9-olmoe-ampbf16-adamw-b2s1024-ckpt", hf("olmoe", OLMOE), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    inference("f9-olmoe-infer-bf16-b4s512-g8", hf("olmoe", OLMOE), 4, 512, "bf16", 8),
    tr("f9-gptj-bf16-adamw-b2s1024-eager", hf("gptj", GPTJ, "eager"), 2, 1024, "bf16", "adamw"),
    tr("f9-gptj-ampbf16-adamw-b2s1024-eager-ckpt", hf("gptj", GPTJ, "eager"), 2, 1024, "amp_bf16", "adamw",
       ckpt=True),
    inference("f9-gptj-infer-bf16-b2s1024-g8-eager", hf("gptj", GPTJ, "eager"), 2, 1024, "bf16", 8),
    tr("f9-bloom-bf16-adamw-b4s1024-eager", hf("bloom", BLOOM, "eager"), 4, 1024, "bf16", "adamw"),
    tr("f9-bloom-ampbf16-adamw-b4s1024", hf("bloom", BLOOM), 4, 1024, "amp_bf16", "adamw"),
    inference("f9-bloom-infer-bf16-b4s512-g8-eager", hf("bloom", BLOOM, "eager"), 4, 512, "bf16", 8),
    tr("f9-glm4-bf16-adamw-b2s1024", hf("glm4", GLM4), 2, 1024, "bf16", "adamw"),
    tr("f9-glm4-ampbf16-adamw-b2s1024-ckpt", hf("glm4", GLM4), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    inference("f9-glm4-infer-bf16-b4s512-g8", hf("glm4", GLM4), 4, 512, "bf16", 8),
    tr("f9-nemotron-bf16-adamw-b2s1024", hf("nemotron", NEMOTRON), 2, 1024, "bf16", "adamw"),
    tr("f9-nemotron-ampbf16-adamw-b2s1024-ckpt", hf("nemotron", NEMOTRON), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    inference("f9-nemotron-infer-bf16-b4s512-g8", hf("nemotron", NEMOTRON), 4, 512, "bf16", 8),
    tr("f9-olmo-bf16-adamw-b4s1024", hf("olmo", OLMO), 4, 1024, "bf16", "adamw"),
    tr("f9-olmo-clip-ampbf16-adamw-b2s1024-ckpt", hf("olmo", OLMO_CLIP), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    inference("f9-olmo-infer-bf16-b4s512-g8", hf("olmo", OLMO), 4, 512, "bf16", 8),
]

if __name__ == "__main__":
    for c in CASES:
        print(json.dumps(c))
