#!/usr/bin/env python3
"""Holdout set 3 (2026-11-29): written and predicted before measuring, after holdout2's fixes. Probes what no
earlier case covers: sliding-window attention in training, Llama with attention and MLP biases (MHA, eager,
checkpointing), untied Qwen2, fp32 GPT-2 inference (memory-efficient SDPA without grad), amp Qwen2 inference,
gemma2 fp32 inference, BERT-large amp fp16 with checkpointing, GPT-2 large Adafactor with checkpointing, Llama
eager inference, and caps at +-1.5 % of the predicted reserved peak on ResNet-50 and Mistral.
Usage: python3 make_holdout3.py id=reserved_mib ... > holdout3-input.jsonl"""
from case_helpers import capped as cap_at, hf, inference as inf, print_cases, training as tr, vision as tv


MISW = {"hidden_size": 2048, "intermediate_size": 7168, "num_hidden_layers": 6, "num_attention_heads": 16,
        "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 32768, "sliding_window": 512}
QU = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 12, "num_attention_heads": 14,
      "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": False}
LB = {"hidden_size": 1536, "intermediate_size": 4096, "num_hidden_layers": 8, "num_attention_heads": 12,
      "num_key_value_heads": 12, "vocab_size": 32000, "attention_bias": True, "mlp_bias": True}
GS = {"n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
GL = {"n_layer": 36, "n_embd": 1280, "n_head": 20, "vocab_size": 50257, "n_positions": 1024}
BL = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096}
GEM = {"hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 4, "num_attention_heads": 8,
       "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192,
       "sliding_window": 4096}
L1B = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
       "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": True}
MIS6 = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 6, "num_attention_heads": 32,
        "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 32768}

CASES = [
    tr("h3-misw6-bf16-adamw-b2s2048", hf("mistral", MISW), 2, 2048, "bf16", "adamw"),
    tr("h3-misw6-ampbf16-adamw-b2s2048-ckpt", hf("mistral", MISW), 2, 2048, "amp_bf16", "adamw", ckpt=True),
    tr("h3-llbias8-bf16-adamw-b4s1024-ckpt-eager", hf("llama", LB, "eager"), 4, 1024, "bf16", "adamw", ckpt=True),
    tr("h3-llbias8-ampbf16-sgdmom-b4s1024", hf("llama", LB), 4, 1024, "amp_bf16", "sgd_momentum"),
    tr("h3-q05u12-ampbf16-adamw-b4s1024", hf("qwen2", QU), 4, 1024, "amp_bf16", "adamw"),
    tr("h3-bertl-ampfp16-adamw-b16s512-ckpt", hf("bert", BL), 16, 512, "amp_fp16", "adamw", ckpt=True),
    tr("h3-gpt2l-bf16-adafactor-b4s1024-ckpt", hf("gpt2", GL), 4, 1024, "bf16", "adafactor", impl="default",
       ckpt=True),
    tv("h3-resnet50-fp32-adamw-b96", "resnet50", 96, "fp32", "adamw"),
    inf("h3-gpt2s-infer-fp32-b8s512-g32", hf("gpt2", GS), 8, 512, "fp32", 32),
    inf("h3-q05u12-infer-ampbf16-b8s2048-g16", hf("qwen2", QU), 8, 2048, "amp_bf16", 16),
    inf("h3-gem4-infer-fp32-b2s2048-g8", hf("gemma2", GEM), 2, 2048, "fp32", 8),
    inf("h3-l1b-infer-bf16-b4s2048-g16-eager", hf("llama", L1B, "eager"), 4, 2048, "bf16", 16),
    inf("h3-mis6-infer-bf16-b16s1024-g32", hf("mistral", MIS6), 16, 1024, "bf16", 32),
]


def capped(case, predicted_reserved_mib):
    """Caps at +-1.5 % of the predicted reserved peak (predicted with memplan before measuring)."""
    return [cap_at(case, predicted_reserved_mib, f, "cap" + tag) for tag, f in (("hi", 1.015), ("lo", 0.985))]


if __name__ == "__main__":
    import sys
    print_cases(CASES, sys.argv[1:], capped)
