#!/usr/bin/env python3
"""Writes calibrate/cases/corpus-input.jsonl: the uncapped new cases of the H200 corpus (training + inference).

Capped cases are derived from these cases' measurements by make_capped.py; assemble.py joins both, sorts by id
and marks every 5th case as holdout.  `_est_gib` is only a scheduling hint for harness.py (rough, generous).
"""
import json
import os

GPT2M = {"n_layer": 24, "n_embd": 1024, "n_head": 16, "vocab_size": 50257, "n_positions": 1024}
GPT2L = {"n_layer": 36, "n_embd": 1280, "n_head": 20, "vocab_size": 50257, "n_positions": 1024}
# Llama-3.2-1B-like: GQA 32/8, tied embeddings, 128k vocab (no llama3 rope scaling)
L1B = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
       "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192, "tie_word_embeddings": True}
# Llama-3.2-3B-like shape with 8 of its 28 layers
L3B8 = {"hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 8, "num_attention_heads": 24,
        "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192, "tie_word_embeddings": True}
# Qwen2.5-0.5B-like: qkv bias (always on in qwen2), GQA 14/2, tied, 152k vocab
Q05 = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
       "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True}
# Mistral-7B shape with 4 layers
MIS4 = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 4, "num_attention_heads": 32,
        "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 32768, "sliding_window": None}
MIS4SW = dict(MIS4, sliding_window=1024)
# tiny Mixtral: 4 layers, 8 experts top-2 / 2 layers, 4 experts top-2
MIX4X8 = {"hidden_size": 1024, "intermediate_size": 3584, "num_hidden_layers": 4, "num_attention_heads": 16,
          "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 4096,
          "num_local_experts": 8, "num_experts_per_tok": 2, "sliding_window": None}
MIX2X4 = dict(MIX4X8, num_hidden_layers=2, num_local_experts=4)
BERTL = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096}

cases = []


def hf(cid, mt, cfg, mode="training", b=4, s=1024, prec="amp_bf16", opt="adamw", impl="foreach", ckpt=False,
       accum=1, attn="sdpa", est=20, gen=None, **extra):
    c = {"id": cid, "model": {"source": "huggingface", "model_type": mt, "config": cfg, "attn_implementation": attn},
         "mode": mode, "batch_size": b, "seq_len": s, "precision": prec}
    if mode == "training":
        c.update({"optimizer": opt, "optimizer_impl": impl, "grad_checkpointing": ckpt, "grad_accum_steps": accum})
    else:
        c["generate_tokens"] = gen
    c.update(extra)
    c["_est_gib"] = est
    cases.append(c)


def tv(cid, name, b, prec="amp_bf16", opt="sgd_momentum", impl="foreach", accum=1, est=15):
    cases.append({"id": cid, "model": {"source": "torchvision", "name": name}, "mode": "training", "batch_size": b,
                  "image_size": 224, "num_classes": 1000, "precision": prec, "optimizer": opt,
                  "optimizer_impl": impl, "grad_checkpointing": False, "grad_accum_steps": accum, "_est_gib": est})


# ---- GPT-2 medium (355M): precisions, every optimizer/impl, attention, checkpointing, accumulation, freezing
hf("gpt2m-fp32-adamw-b4s1024", "gpt2", GPT2M, prec="fp32", est=24)
hf("gpt2m-ampbf16-adamw-b4s1024", "gpt2", GPT2M, est=20)
hf("gpt2m-ampfp16-adamw-b4s1024", "gpt2", GPT2M, prec="amp_fp16", est=20)
hf("gpt2m-bf16-adamw-b4s1024", "gpt2", GPT2M, prec="bf16", est=14)
hf("gpt2m-fp16-adamw-b4s1024", "gpt2", GPT2M, prec="fp16", est=14)
hf("gpt2m-ampbf16-adamwfused-b4s1024", "gpt2", GPT2M, impl="fused", est=20)
hf("gpt2m-ampbf16-adamwforloop-b4s1024", "gpt2", GPT2M, impl="forloop", est=20)
hf("gpt2m-ampbf16-adamwdefault-b4s1024", "gpt2", GPT2M, impl="default", est=20)
hf("gpt2m-ampbf16-adam-b4s1024", "gpt2", GPT2M, opt="adam", est=20)
hf("gpt2m-ampbf16-sgd-b4s1024", "gpt2", GPT2M, opt="sgd", est=18)
hf("gpt2m-ampbf16-sgdmom-b4s1024", "gpt2", GPT2M, opt="sgd_momentum", est=18)
hf("gpt2m-ampbf16-sgdmomfused-b4s1024", "gpt2", GPT2M, opt="sgd_momentum", impl="fused", est=18)
hf("gpt2m-ampbf16-adafactor-b4s1024", "gpt2", GPT2M, opt="adafactor", impl="default", est=18)
hf("gpt2m-ampbf16-adamw-b4s1024-eager", "gpt2", GPT2M, attn="eager", est=40)
hf("gpt2m-fp32-adamw-b4s512-eager", "gpt2", GPT2M, prec="fp32", s=512, attn="eager", est=20)
hf("gpt2m-ampbf16-adamw-b4s1024-ckpt", "gpt2", GPT2M, ckpt=True, est=12)
hf("gpt2m-ampbf16-adamw-b4s1024-ckpt0to11", "gpt2", GPT2M, ckpt=True, grad_checkpointing_layers=list(range(12)),
   est=16)
hf("gpt2m-ampbf16-adamw-b4s1024-ckptevery3", "gpt2", GPT2M, ckpt=True, grad_checkpointing_layers=list(range(0, 24, 3)),
   est=18)
hf("gpt2m-ampbf16-adamw-b1x4s1024", "gpt2", GPT2M, b=1, accum=4, est=10)
hf("gpt2m-fp32-sgdmom-b2x2s1024", "gpt2", GPT2M, prec="fp32", b=2, accum=2, opt="sgd_momentum", est=14)
hf("gpt2m-ampbf16-adamw-b4s1024-frozen0to11", "gpt2", GPT2M, frozen_layers=list(range(12)), est=18)
hf("gpt2m-ampbf16-adamw-b4s1024-frozenemb", "gpt2", GPT2M, freeze_embeddings=True, est=18)
# batch sweep (s512) and sequence sweep (b4)
for b in (1, 2, 4, 8):
    hf("gpt2m-ampbf16-adamw-b%ds512" % b, "gpt2", GPT2M, b=b, s=512, est=6 + 2.5 * b)
hf("gpt2m-ampbf16-adamw-b4s256", "gpt2", GPT2M, s=256, est=10)
# ---- GPT-2 large (774M)
hf("gpt2l-fp32-adamw-b2s1024", "gpt2", GPT2L, prec="fp32", b=2, est=30)
hf("gpt2l-ampbf16-adamwfused-b4s1024-ckpt", "gpt2", GPT2L, impl="fused", ckpt=True, est=22)
hf("gpt2l-bf16-sgdmom-b4s512", "gpt2", GPT2L, prec="bf16", s=512, opt="sgd_momentum", est=14)
# ---- Llama-3.2-1B-like
hf("l1b-bf16-adamw-b2s1024", "llama", L1B, prec="bf16", b=2, est=20)
hf("l1b-ampbf16-adamw-b2s1024", "llama", L1B, b=2, est=32)
hf("l1b-ampbf16-adamwfused-b2s1024", "llama", L1B, b=2, impl="fused", est=30)
hf("l1b-fp32-adamw-b1s1024", "llama", L1B, prec="fp32", b=1, est=36)
hf("l1b-ampbf16-adamw-b2s1024-ckpt", "llama", L1B, b=2, ckpt=True, est=26)
hf("l1b-ampbf16-adamw-b2s1024-ckpt0to7", "llama", L1B, b=2, ckpt=True, grad_checkpointing_layers=list(range(8)),
   est=30)
hf("l1b-bf16-adamw-b2s1024-eager", "llama", L1B, prec="bf16", b=2, attn="eager", est=26)
hf("l1b-ampbf16-adamw-b2s512", "llama", L1B, b=2, s=512, est=26)
hf("l1b-ampbf16-adamw-b2s2048", "llama", L1B, b=2, s=2048, est=45)
hf("l1b-bf16-adamw-b4s1024-frozen0to11-frozenemb", "llama", L1B, prec="bf16", b=4,
   frozen_layers=list(range(12)), freeze_embeddings=True, est=20)
hf("l1b-ampfp16-adafactor-b2s1024", "llama", L1B, b=2, prec="amp_fp16", opt="adafactor", impl="default", est=26)
hf("l1b-fp16-adamw-b2s1024", "llama", L1B, prec="fp16", b=2, est=20)
# ---- Llama-3.2-3B-like, 8 layers
hf("l3b8-bf16-adamw-b2s1024", "llama", L3B8, prec="bf16", b=2, est=22)
hf("l3b8-ampbf16-adamw-b1x2s2048-ckpt", "llama", L3B8, b=1, accum=2, s=2048, ckpt=True, est=34)
# ---- Qwen2.5-0.5B-like
hf("q05-ampbf16-adamw-b4s1024", "qwen2", Q05, est=30)
hf("q05-bf16-adamwforloop-b4s1024", "qwen2", Q05, prec="bf16", impl="forloop", est=20)
hf("q05-fp32-adam-b2s1024", "qwen2", Q05, prec="fp32", b=2, opt="adam", est=24)
hf("q05-ampbf16-adamw-b8s1024-ckpt", "qwen2", Q05, b=8, ckpt=True, est=30)
hf("q05-ampbf16-adamw-b4s2048", "qwen2", Q05, s=2048, est=50)
# ---- Mistral-7B shape, 4 layers
hf("mis4-bf16-adamw-b2s1024", "mistral", MIS4, prec="bf16", b=2, est=22)
hf("mis4-ampbf16-adamwfused-b1s2048-ckpt", "mistral", MIS4, b=1, s=2048, impl="fused", ckpt=True, est=30)
# ---- tiny Mixtral (MoE, top-2)
hf("mix4x8-ampbf16-adamw-b4s1024", "mixtral", MIX4X8, est=24)
hf("mix4x8-bf16-adamw-b4s1024", "mixtral", MIX4X8, prec="bf16", est=16)
hf("mix2x4-fp32-adamw-b2s512", "mixtral", MIX2X4, prec="fp32", b=2, s=512, est=10)
# ---- BERT large
hf("bertl-ampbf16-adamw-b16s512", "bert", BERTL, b=16, s=512, est=30)
hf("bertl-fp32-adamw-b8s512-ckpt", "bert", BERTL, prec="fp32", b=8, s=512, ckpt=True, est=14)
hf("bertl-ampfp16-adamwfused-b16s256-eager", "bert", BERTL, prec="amp_fp16", b=16, s=256, impl="fused",
   attn="eager", est=20)
# ---- torchvision
tv("resnet18-fp32-sgdmom-b128", "resnet18", 128, prec="fp32", est=10)
tv("resnet18-ampbf16-adamw-b256", "resnet18", 256, opt="adamw", est=14)
tv("resnet34-ampfp16-sgdmom-b128", "resnet34", 128, prec="amp_fp16", est=10)
tv("resnet101-ampbf16-sgdmom-b64", "resnet101", 64, est=12)
tv("resnet101-fp32-adamw-b32", "resnet101", 32, prec="fp32", opt="adamw", est=12)
tv("resnet101-bf16-sgd-b64", "resnet101", 64, prec="bf16", opt="sgd", est=10)
tv("resnet152-ampbf16-adamwfused-b32x2", "resnet152", 32, opt="adamw", impl="fused", accum=2, est=12)
tv("vitb16-ampbf16-adamw-b64", "vit_b_16", 64, opt="adamw", est=16)
tv("vitb16-fp32-adamwfused-b32", "vit_b_16", 32, prec="fp32", opt="adamw", impl="fused", est=16)
tv("vitb32-fp16-sgdmom-b128", "vit_b_32", 128, prec="fp16", est=8)
tv("vitl16-ampbf16-adamw-b32", "vit_l_16", 32, opt="adamw", est=30)
tv("vitl16-bf16-adafactor-b32", "vit_l_16", 32, prec="bf16", opt="adafactor", impl="default", est=20)
# ---- inference (prefill + greedy generate)
hf("l1b-infer-bf16-b1s2048-g32", "llama", L1B, mode="inference", b=1, s=2048, prec="bf16", gen=32, est=6)
hf("l1b-infer-bf16-b8s1024-g32", "llama", L1B, mode="inference", b=8, s=1024, prec="bf16", gen=32, est=10)
hf("l1b-infer-bf16-b16s512-g64", "llama", L1B, mode="inference", b=16, s=512, prec="bf16", gen=64, est=10)
hf("l1b-infer-bf16-b4s4096-g0", "llama", L1B, mode="inference", b=4, s=4096, prec="bf16", gen=0, est=12)
hf("mis4sw-infer-bf16-b4s4096-g32", "mistral", MIS4SW, mode="inference", b=4, s=4096, prec="bf16", gen=32, est=12)
hf("mis4-infer-bf16-b4s4096-g32", "mistral", MIS4, mode="inference", b=4, s=4096, prec="bf16", gen=32, est=12)
hf("mix4x8-infer-bf16-b8s1024-g32", "mixtral", MIX4X8, mode="inference", b=8, s=1024, prec="bf16", gen=32, est=6)
hf("q05-infer-bf16-b32s1024-g16", "qwen2", Q05, mode="inference", b=32, s=1024, prec="bf16", gen=16, est=12)
hf("gpt2m-infer-fp16-b16s512-g64", "gpt2", GPT2M, mode="inference", b=16, s=512, prec="fp16", gen=64, est=6)
hf("gpt2l-infer-ampbf16-b8s512-g32", "gpt2", GPT2L, mode="inference", b=8, s=512, prec="amp_bf16", gen=32, est=8)
hf("l3b8-infer-fp32-b2s2048-g16", "llama", L3B8, mode="inference", b=2, s=2048, prec="fp32", gen=16, est=12)

if __name__ == "__main__":
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), "duplicate ids"
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus-input.jsonl")
    with open(out, "w") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
    print("%d cases -> %s (sum est %.0f GiB)" % (len(cases), out, sum(c["_est_gib"] for c in cases)))
