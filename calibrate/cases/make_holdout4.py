#!/usr/bin/env python3
"""Holdout set 4 (2026-11-29): fit verdicts at tight caps. Configurations shaped like the public cases (TinyLlama,
GPT-2 medium, BERT-base, ResNet-50, a Llama-7B-shape inference) at batch sizes the corpus lacks, each capped at
+0.75 % and -0.75 % of memplan's predicted reserved peak (predicted before measuring, passed as id=MiB), with and
without expandable segments. Usage: python3 make_holdout4.py id=reserved_mib ... > holdout4-input.jsonl"""
import sys

from case_helpers import capped, hf, print_cases, training, vision

TL = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32,
      "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048}
GM = {"n_layer": 24, "n_embd": 1024, "n_head": 16, "vocab_size": 50257, "n_positions": 1024}
BB = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}
L7 = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 8, "num_attention_heads": 32,
      "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096}


tr = training


BASE = [
    tr("h4-tinyllama-bf16-adamw-b2s2048", hf("llama", TL), 2, 2048, "bf16", "adamw"),
    tr("h4-tinyllama-ampbf16-adamw-b2s2048-ckpt", hf("llama", TL), 2, 2048, "amp_bf16", "adamw", ckpt=True),
    tr("h4-gpt2m-fp32-adamw-b2s1024", hf("gpt2", GM), 2, 1024, "fp32", "adamw"),
    tr("h4-bertbase-ampbf16-adamw-b16s512", hf("bert", BB), 16, 512, "amp_bf16", "adamw"),
    vision("h4-resnet50-ampbf16-sgdmom-b128", "resnet50", 128, "amp_bf16", "sgd_momentum"),
    {"id": "h4-l7s8-infer-bf16-b8s2048-g16", "model": hf("llama", L7), "mode": "inference", "batch_size": 8,
     "seq_len": 2048, "precision": "bf16", "generate_tokens": 16},
]

def caps(c, r):
    out = [capped(c, r, f, "cap" + tag) for tag, f in (("hi", 1.0075), ("lo", 0.9925))]
    if c["mode"] == "training":  # expandable segments at the low cap
        out.append(capped(c, r, 0.9925, "expseg-caplo", alloc_conf="expandable_segments:True"))
    return out


if __name__ == "__main__":
    print_cases(BASE, sys.argv[1:], caps)
