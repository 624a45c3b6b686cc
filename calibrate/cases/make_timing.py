#!/usr/bin/env python3
"""Cases of the step-time corpus (issue 17 part 3): writes calibrate/cases/timing-input.jsonl (tuning set, measured
first) and calibrate/cases/timing-holdout-input.jsonl (held out: predicted at a named commit before measuring).
Sizes chosen so a step takes ~30-600 ms on an H200; run by calibrate/timing_corpus.py one case at a time."""
import json
import os

GPT2 = lambda e, h, l: {"source": "huggingface", "model_type": "gpt2",
                        "config": {"n_embd": e, "n_head": h, "n_layer": l, "n_positions": 1024, "vocab_size": 50257}}
LLAMA = lambda h, i, nh, nl, kv, v, tie=False, mp=4096: {
    "source": "huggingface", "model_type": "llama",
    "config": dict({"hidden_size": h, "intermediate_size": i, "num_attention_heads": nh, "num_hidden_layers": nl,
                    "num_key_value_heads": kv, "vocab_size": v, "max_position_embeddings": mp},
                   **({"tie_word_embeddings": True} if tie else {}))}
QWEN2 = lambda h, i, nh, nl, kv, tie: {"source": "huggingface", "model_type": "qwen2", "config": {
    "hidden_size": h, "intermediate_size": i, "num_attention_heads": nh, "num_hidden_layers": nl,
    "num_key_value_heads": kv, "vocab_size": 151936, "tie_word_embeddings": tie, "max_position_embeddings": 32768}}
BERT = lambda h, nl, nh: {"source": "huggingface", "model_type": "bert", "config": {
    "hidden_size": h, "num_hidden_layers": nl, "num_attention_heads": nh, "intermediate_size": 4 * h}}
TV = lambda n: {"source": "torchvision", "name": n}
M = {"gpt2s": GPT2(768, 12, 12), "gpt2m": GPT2(1024, 16, 24), "gpt2l": GPT2(1280, 20, 36), "gpt2xl": GPT2(1600, 25, 48),
     "l1b": LLAMA(2048, 8192, 32, 16, 8, 128256, tie=True, mp=8192), "tl": LLAMA(2048, 5632, 32, 22, 4, 32000),
     "l7b": LLAMA(4096, 11008, 32, 32, 32, 32000), "q05": QWEN2(896, 4864, 14, 24, 2, True),
     "q15": QWEN2(1536, 8960, 12, 28, 2, True), "bertl": BERT(1024, 24, 16), "bertb": BERT(768, 12, 12)}


def lm(cid, m, prec, b, s, opt="adamw", impl="foreach", ckpt=False, ga=1, attn="sdpa"):
    model = dict(M[m])
    model["attn_implementation"] = attn
    return {"id": cid, "model": model, "mode": "training", "batch_size": b, "seq_len": s, "precision": prec,
            "optimizer": opt, "optimizer_impl": impl, "grad_checkpointing": ckpt, "grad_accum_steps": ga}


def tv(cid, name, prec, b, opt="sgd_momentum", impl="foreach", img=224):
    c = {"id": cid, "model": TV(name), "mode": "training", "batch_size": b, "precision": prec, "optimizer": opt,
         "optimizer_impl": impl, "grad_checkpointing": False, "grad_accum_steps": 1}
    if img != 224:
        c["image_size"] = img
    return c


def inf(cid, m, prec, b, s, g):
    model = dict(M[m])
    model["attn_implementation"] = "sdpa"
    return {"id": cid, "model": model, "mode": "inference", "batch_size": b, "seq_len": s, "precision": prec,
            "generate_tokens": g}


TUNE = [
    lm("t-gpt2m-ampbf16-adamw-b8s1024", "gpt2m", "amp_bf16", 8, 1024),
    lm("t-gpt2m-ampbf16-adamw-b8s1024-ckpt", "gpt2m", "amp_bf16", 8, 1024, ckpt=True),
    lm("t-gpt2m-ampbf16-adamw-b4x2s1024", "gpt2m", "amp_bf16", 4, 1024, ga=2),
    lm("t-gpt2m-ampbf16-adamwfused-b8s1024", "gpt2m", "amp_bf16", 8, 1024, impl="fused"),
    lm("t-gpt2m-ampfp16-adamw-b8s1024", "gpt2m", "amp_fp16", 8, 1024),
    lm("t-gpt2m-ampbf16-adamw-b4s1024-eager", "gpt2m", "amp_bf16", 4, 1024, attn="eager"),
    lm("t-gpt2s-fp32-adamw-b8s1024", "gpt2s", "fp32", 8, 1024),
    lm("t-gpt2s-ampbf16-adamw-b4s512", "gpt2s", "amp_bf16", 4, 512),
    lm("t-gpt2s-bf16-sgdmom-b16s1024", "gpt2s", "bf16", 16, 1024, opt="sgd_momentum"),
    lm("t-gpt2xl-ampbf16-adamw-b4s1024", "gpt2xl", "amp_bf16", 4, 1024),
    lm("t-l1b-bf16-adamw-b4s2048", "l1b", "bf16", 4, 2048),
    lm("t-l1b-bf16-adamw-b4s2048-ckpt", "l1b", "bf16", 4, 2048, ckpt=True),
    lm("t-l1b-bf16-adamw-b2x2s2048", "l1b", "bf16", 2, 2048, ga=2),
    lm("t-l1b-bf16-adamw-b2s1024-eager", "l1b", "bf16", 2, 1024, attn="eager"),
    lm("t-tl-ampbf16-adamw-b8s2048", "tl", "amp_bf16", 8, 2048),
    lm("t-tl-bf16-adamwfused-b4s2048-ckpt", "tl", "bf16", 4, 2048, impl="fused", ckpt=True),
    lm("t-tl-fp32-adamw-b1s1024", "tl", "fp32", 1, 1024),
    lm("t-l7b-bf16-adamw-b2s2048-ckpt", "l7b", "bf16", 2, 2048, ckpt=True),
    lm("t-q05-ampbf16-adamw-b8s1024", "q05", "amp_bf16", 8, 1024),
    lm("t-q05-bf16-sgdmom-b4s2048", "q05", "bf16", 4, 2048, opt="sgd_momentum"),
    lm("t-bertl-ampbf16-adamw-b16s512", "bertl", "amp_bf16", 16, 512),
    lm("t-bertb-fp32-adamw-b16s512", "bertb", "fp32", 16, 512),
    tv("t-resnet50-ampbf16-sgdmom-b128", "resnet50", "amp_bf16", 128),
    tv("t-resnet50-fp32-sgdmom-b64", "resnet50", "fp32", 64),
    tv("t-resnet18-ampbf16-adamw-b256", "resnet18", "amp_bf16", 256, opt="adamw"),
    tv("t-resnet101-bf16-adamw-b64", "resnet101", "bf16", 64, opt="adamw"),
    tv("t-vitb16-ampbf16-adamw-b64", "vit_b_16", "amp_bf16", 64, opt="adamw"),
    tv("t-convnext_tiny-ampbf16-adamw-b64", "convnext_tiny", "amp_bf16", 64, opt="adamw"),
    tv("t-efficientnet_b0-ampbf16-sgdmom-b128", "efficientnet_b0", "amp_bf16", 128),
    tv("t-mobilenet_v2-fp32-sgdmom-b128", "mobilenet_v2", "fp32", 128),
    inf("t-l1b-infer-bf16-b8s2048-g16", "l1b", "bf16", 8, 2048, 16),
    inf("t-gpt2m-infer-bf16-b16s1024-g16", "gpt2m", "bf16", 16, 1024, 16),
    inf("t-tl-infer-bf16-b1s512-g32", "tl", "bf16", 1, 512, 32),
    inf("t-l7b-infer-bf16-b4s2048-g16", "l7b", "bf16", 4, 2048, 16),
]
HOLD = [
    lm("h-gpt2l-ampbf16-adamw-b8s1024", "gpt2l", "amp_bf16", 8, 1024),
    lm("h-gpt2l-ampbf16-adamw-b8s1024-ckpt", "gpt2l", "amp_bf16", 8, 1024, ckpt=True),
    lm("h-gpt2l-ampbf16-adamw-b4x2s1024", "gpt2l", "amp_bf16", 4, 1024, ga=2),
    lm("h-gpt2m-fp32-adamw-b4s1024", "gpt2m", "fp32", 4, 1024),
    lm("h-q15-ampbf16-adamw-b4s2048-ckpt", "q15", "amp_bf16", 4, 2048, ckpt=True),
    lm("h-q15-bf16-adamwfused-b4s1024", "q15", "bf16", 4, 1024, impl="fused"),
    lm("h-tl-bf16-adamw-b2x4s2048", "tl", "bf16", 2, 2048, ga=4),
    lm("h-tl-bf16-adamw-b8s2048-ckpt", "tl", "bf16", 8, 2048, ckpt=True),
    lm("h-bertb-ampfp16-adamw-b32s512", "bertb", "amp_fp16", 32, 512),
    tv("h-resnet152-ampbf16-sgdmom-b64", "resnet152", "amp_bf16", 64),
    tv("h-wide_resnet50_2-bf16-adamw-b64", "wide_resnet50_2", "bf16", 64, opt="adamw"),
    tv("h-convnext_small-ampbf16-adamw-b32", "convnext_small", "amp_bf16", 32, opt="adamw"),
    inf("h-q15-infer-bf16-b8s1024-g16", "q15", "bf16", 8, 1024, 16),
    inf("h-gpt2xl-infer-bf16-b4s1024-g16", "gpt2xl", "bf16", 4, 1024, 16),
]
if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for name, cases in (("timing-input.jsonl", TUNE), ("timing-holdout-input.jsonl", HOLD)):
        with open(os.path.join(here, name), "w") as f:
            for c in cases:
                if name.startswith("timing-holdout"):
                    c["holdout"] = True
                f.write(json.dumps(c) + "\n")
    print(len(TUNE), len(HOLD))
