#!/usr/bin/env python3
"""Holdout set 5 (2026-11-29): written and predicted before measuring, after the fixes holdouts 2-4 led to, to
check them on configurations none of them used: GPT-2 eager fp16 with checkpointing, GQA Llama eager training,
Qwen2 eager amp inference, Mistral sliding window 1024 at s4096 with checkpointing, BERT-large fp32 eager, MHA
Llama with MLP biases and checkpointing, Adafactor on a bf16 Qwen2, full-fp16 GPT-2 medium, ResNet-101 AdamW,
ViT-L amp, and caps at +-0.5 % of the predicted reserved peak (one with expandable segments).
Usage: python3 make_holdout5.py id=reserved_mib ... > holdout5-input.jsonl"""
import sys

from case_helpers import capped, hf, inference, print_cases, training, vision


tr = training
tv = vision


GS = {"n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
GM = {"n_layer": 24, "n_embd": 1024, "n_head": 16, "vocab_size": 50257, "n_positions": 1024}
TL8 = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 8, "num_attention_heads": 32,
       "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 4096}
Q05 = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 12, "num_attention_heads": 14,
       "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True}
MSW = {"hidden_size": 1024, "intermediate_size": 3584, "num_hidden_layers": 8, "num_attention_heads": 16,
       "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 32768, "sliding_window": 1024}
BL = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096}
LMB = {"hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 12, "num_attention_heads": 16,
       "num_key_value_heads": 16, "vocab_size": 32000, "mlp_bias": True}

CASES = [
    tr("h5-gpt2s-ampfp16-adamw-b4s512-ckpt-eager", hf("gpt2", GS, "eager"), 4, 512, "amp_fp16", "adamw", ckpt=True),
    tr("h5-tl8-bf16-adamw-b2s1024-eager", hf("llama", TL8, "eager"), 2, 1024, "bf16", "adamw"),
    tr("h5-mswin8-ampbf16-adamw-b2s4096-ckpt", hf("mistral", MSW), 2, 4096, "amp_bf16", "adamw", ckpt=True),
    tr("h5-bertl-fp32-adamw-b8s256-eager", hf("bert", BL, "eager"), 8, 256, "fp32", "adamw"),
    tr("h5-lmb12-bf16-adamw-b4s1024-ckpt", hf("llama", LMB), 4, 1024, "bf16", "adamw", ckpt=True),
    tr("h5-q05-bf16-adafactor-b2s1024", hf("qwen2", Q05), 2, 1024, "bf16", "adafactor", impl="default"),
    tr("h5-gpt2m-fp16-sgd-b8s512", hf("gpt2", GM), 8, 512, "fp16", "sgd_momentum"),
    tr("h5-tl8-ampbf16-adamw-b4s1024", hf("llama", TL8), 4, 1024, "amp_bf16", "adamw"),
    tv("h5-resnet101-fp32-adamw-b48", "resnet101", 48, "fp32", "adamw"),
    tv("h5-vitl16-ampbf16-sgdmom-b32", "vit_l_16", 32, "amp_bf16", "sgd_momentum"),
    inference("h5-q05-infer-ampbf16-b4s1024-g16-eager", hf("qwen2", Q05, "eager"), 4, 1024, "amp_bf16", 16),
]

def caps(c, r):
    return [capped(c, r, f, "cap" + tag, **({"alloc_conf": "expandable_segments:True"} if expseg else {}))
            for tag, f, expseg in (("hi", 1.005, False), ("lo", 0.995, False), ("expseg-lo", 0.995, True))]


if __name__ == "__main__":
    print_cases(CASES, sys.argv[1:], caps)
