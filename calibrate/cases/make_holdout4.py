#!/usr/bin/env python3
"""Holdout set 4 (2026-11-29): fit verdicts at tight caps. Configurations shaped like the public cases (TinyLlama,
GPT-2 medium, BERT-base, ResNet-50, a Llama-7B-shape inference) at batch sizes the corpus lacks, each capped at
+0.75 % and -0.75 % of memplan's predicted reserved peak (predicted before measuring, passed as id=MiB), with and
without expandable segments. Usage: python3 make_holdout4.py id=reserved_mib ... > holdout4-input.jsonl"""
import json
import sys

TL = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32,
      "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048}
GM = {"n_layer": 24, "n_embd": 1024, "n_head": 16, "vocab_size": 50257, "n_positions": 1024}
BB = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072}
L7 = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 8, "num_attention_heads": 32,
      "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096}


def hf(mt, cfg):
    return {"source": "huggingface", "model_type": mt, "config": cfg, "attn_implementation": "sdpa"}


def tr(id, model, b, s, prec, opt, ckpt=False, ga=1, **kw):
    c = {"id": id, "model": model, "mode": "training", "batch_size": b, "seq_len": s, "precision": prec,
         "optimizer": opt, "optimizer_impl": "foreach", "grad_checkpointing": ckpt, "grad_accum_steps": ga}
    c.update(kw)
    return c


BASE = [
    tr("h4-tinyllama-bf16-adamw-b2s2048", hf("llama", TL), 2, 2048, "bf16", "adamw"),
    tr("h4-tinyllama-ampbf16-adamw-b2s2048-ckpt", hf("llama", TL), 2, 2048, "amp_bf16", "adamw", ckpt=True),
    tr("h4-gpt2m-fp32-adamw-b2s1024", hf("gpt2", GM), 2, 1024, "fp32", "adamw"),
    tr("h4-bertbase-ampbf16-adamw-b16s512", hf("bert", BB), 16, 512, "amp_bf16", "adamw"),
    {"id": "h4-resnet50-ampbf16-sgdmom-b128", "model": {"source": "torchvision", "name": "resnet50"},
     "mode": "training", "batch_size": 128, "image_size": 224, "num_classes": 1000, "precision": "amp_bf16",
     "optimizer": "sgd_momentum", "optimizer_impl": "foreach", "grad_checkpointing": False, "grad_accum_steps": 1},
    {"id": "h4-l7s8-infer-bf16-b8s2048-g16", "model": hf("llama", L7), "mode": "inference", "batch_size": 8,
     "seq_len": 2048, "precision": "bf16", "generate_tokens": 16},
]

if __name__ == "__main__":
    predicted = dict(a.split("=") for a in sys.argv[1:])
    for c in BASE:
        print(json.dumps(c))
    for c in BASE:
        if c["id"] not in predicted:
            continue
        r = float(predicted[c["id"]])
        for tag, f in (("hi", 1.0075), ("lo", 0.9925)):
            cc = dict(c)
            cap = round(r * f / 1024, 2)
            cc["id"] = "%s-cap%s-%.2f" % (c["id"], tag, cap)
            cc["memory_cap_gib"] = cap
            print(json.dumps(cc))
        if c["mode"] == "training":  # expandable segments at the low cap
            cc = dict(c)
            cap = round(r * 0.9925 / 1024, 2)
            cc["id"] = "%s-expseg-caplo-%.2f" % (c["id"], cap)
            cc["memory_cap_gib"] = cap
            cc["alloc_conf"] = "expandable_segments:True"
            print(json.dumps(cc))
