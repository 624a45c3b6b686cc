#!/usr/bin/env python3
"""Second step-time set (issue 17 part 3, vision and LoRA; 2026-12-01): writes calibrate/cases/timing2-input.jsonl
(tuning: torchvision families at several batch sizes and precisions, LoRA fine-tuning, transformer families added
by issue 12) and calibrate/cases/timing2-holdout-input.jsonl (held out: measured with --quiet, predicted at a named
commit before the measured file is read). The model dicts are make_timing.py's."""
import json
import os

from make_timing import M, lm, tv

LORA_ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
QWEN3 = lambda h, i, nh, nl, kv, tie: {"source": "huggingface", "model_type": "qwen3", "config": {
    "hidden_size": h, "intermediate_size": i, "num_attention_heads": nh, "num_hidden_layers": nl,
    "num_key_value_heads": kv, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": tie,
    "max_position_embeddings": 40960}}
GEMMA = lambda h, i, nh, nl, kv: {"source": "huggingface", "model_type": "gemma", "config": {
    "hidden_size": h, "intermediate_size": i, "num_attention_heads": nh, "num_hidden_layers": nl,
    "num_key_value_heads": kv, "head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192}}
PHI3 = lambda h, i, nh, nl: {"source": "huggingface", "model_type": "phi3", "config": {
    "hidden_size": h, "intermediate_size": i, "num_attention_heads": nh, "num_hidden_layers": nl,
    "num_key_value_heads": nh, "vocab_size": 32064, "max_position_embeddings": 4096}}
NEOX = lambda h, nh, nl: {"source": "huggingface", "model_type": "gpt_neox", "config": {
    "hidden_size": h, "intermediate_size": 4 * h, "num_attention_heads": nh, "num_hidden_layers": nl,
    "vocab_size": 50304, "max_position_embeddings": 2048}}
M2 = dict(M, q3_06=QWEN3(1024, 3072, 16, 28, 8, True), q3_17=QWEN3(2048, 6144, 16, 28, 8, True),
          gemma2b=GEMMA(2048, 16384, 8, 18, 1), phi3m=PHI3(3072, 8192, 32, 32), neox14=NEOX(2048, 16, 24))


def lm2(cid, m, prec, b, s, **kw):
    lora = kw.pop("lora", None)
    c = lm(cid, "gpt2s", prec, b, s, **kw)
    c["model"] = dict(M2[m], attn_implementation=kw.get("attn", "sdpa"))
    if lora:
        c["lora"] = lora
    return c


def lora(r, targets, alpha=None, dropout=0.05):
    return {"r": r, "alpha": alpha or 2 * r, "dropout": dropout, "target_modules": targets}


TUNE = [
    tv("v-resnet18-ampbf16-sgdmom-b64", "resnet18", "amp_bf16", 64),
    tv("v-resnet34-bf16-adamw-b128", "resnet34", "bf16", 128, opt="adamw"),
    tv("v-resnet50-ampbf16-sgdmom-b32", "resnet50", "amp_bf16", 32),
    tv("v-resnet50-ampfp16-adamw-b64", "resnet50", "amp_fp16", 64, opt="adamw"),
    tv("v-resnet50-fp32-sgdmom-b128", "resnet50", "fp32", 128),
    tv("v-convnext_tiny-ampbf16-adamw-b32", "convnext_tiny", "amp_bf16", 32, opt="adamw"),
    tv("v-convnext_tiny-ampbf16-adamw-b128", "convnext_tiny", "amp_bf16", 128, opt="adamw"),
    tv("v-convnext_small-ampbf16-adamw-b64", "convnext_small", "amp_bf16", 64, opt="adamw"),
    tv("v-convnext_base-ampbf16-adamw-b32", "convnext_base", "amp_bf16", 32, opt="adamw"),
    tv("v-efficientnet_b0-ampbf16-sgdmom-b64", "efficientnet_b0", "amp_bf16", 64),
    tv("v-efficientnet_b0-ampbf16-adamw-b256", "efficientnet_b0", "amp_bf16", 256, opt="adamw"),
    tv("v-efficientnet_b3-ampbf16-sgdmom-b32", "efficientnet_b3", "amp_bf16", 32),
    tv("v-efficientnet_v2_s-ampbf16-adamw-b64", "efficientnet_v2_s", "amp_bf16", 64, opt="adamw"),
    tv("v-mobilenet_v2-ampbf16-sgdmom-b128", "mobilenet_v2", "amp_bf16", 128),
    tv("v-mobilenet_v2-ampbf16-sgdmom-b32", "mobilenet_v2", "amp_bf16", 32),
    tv("v-mobilenet_v3_large-ampbf16-adamw-b128", "mobilenet_v3_large", "amp_bf16", 128, opt="adamw"),
    tv("v-swin_t-ampbf16-adamw-b64", "swin_t", "amp_bf16", 64, opt="adamw"),
    tv("v-swin_s-ampbf16-adamw-b32", "swin_s", "amp_bf16", 32, opt="adamw"),
    tv("v-densenet121-ampbf16-sgdmom-b64", "densenet121", "amp_bf16", 64),
    tv("v-vgg16-ampbf16-sgdmom-b64", "vgg16", "amp_bf16", 64),
    tv("v-regnet_y_1_6gf-ampbf16-sgdmom-b64", "regnet_y_1_6gf", "amp_bf16", 64),
    tv("v-regnet_x_400mf-ampbf16-sgdmom-b128", "regnet_x_400mf", "amp_bf16", 128),
    tv("v-resnext50_32x4d-ampbf16-sgdmom-b64", "resnext50_32x4d", "amp_bf16", 64),
    tv("v-wide_resnet50_2-ampbf16-sgdmom-b32", "wide_resnet50_2", "amp_bf16", 32),
    tv("v-vit_b_16-ampbf16-adamw-b32", "vit_b_16", "amp_bf16", 32, opt="adamw"),
    tv("v-vit_b_32-ampbf16-adamw-b128", "vit_b_32", "amp_bf16", 128, opt="adamw"),
    lm2("l-l1b-bf16-lora16all-b4s2048", "l1b", "bf16", 4, 2048, lora=lora(16, LORA_ALL)),
    lm2("l-l1b-bf16-lora8qv-b4s2048-ckpt", "l1b", "bf16", 4, 2048, ckpt=True, lora=lora(8, ["q_proj", "v_proj"])),
    lm2("l-tl-ampbf16-lora16all-b8s1024", "tl", "amp_bf16", 8, 1024, lora=lora(16, LORA_ALL)),
    lm2("l-l7b-bf16-lora16all-b2s2048-ckpt", "l7b", "bf16", 2, 2048, ckpt=True, lora=lora(16, LORA_ALL)),
    lm2("l-q05-bf16-lora32all-b8s1024", "q05", "bf16", 8, 1024, lora=lora(32, LORA_ALL, dropout=0.0)),
    lm2("f-q3_06-ampbf16-adamw-b8s1024", "q3_06", "amp_bf16", 8, 1024),
    lm2("f-gemma2b-bf16-adamw-b2s2048-ckpt", "gemma2b", "bf16", 2, 2048, ckpt=True),
    lm2("f-neox14-ampbf16-adamw-b4s2048", "neox14", "amp_bf16", 4, 2048),
]

HOLD = [
    tv("hv-resnet152-ampbf16-sgdmom-b32", "resnet152", "amp_bf16", 32),
    tv("hv-resnet50-ampbf16-sgdmom-b24", "resnet50", "amp_bf16", 24),
    tv("hv-convnext_tiny-fp32-adamw-b32", "convnext_tiny", "fp32", 32, opt="adamw"),
    tv("hv-convnext_small-ampbf16-adamw-b16", "convnext_small", "amp_bf16", 16, opt="adamw"),
    tv("hv-efficientnet_b1-ampbf16-sgdmom-b64", "efficientnet_b1", "amp_bf16", 64),
    tv("hv-efficientnet_b0-fp32-adamw-b64", "efficientnet_b0", "fp32", 64, opt="adamw"),
    tv("hv-mobilenet_v3_small-ampbf16-sgdmom-b256", "mobilenet_v3_small", "amp_bf16", 256),
    tv("hv-swin_b-ampbf16-adamw-b16", "swin_b", "amp_bf16", 16, opt="adamw"),
    tv("hv-densenet169-ampbf16-sgdmom-b32", "densenet169", "amp_bf16", 32),
    tv("hv-vgg11-bf16-sgdmom-b64", "vgg11", "bf16", 64),
    tv("hv-regnet_y_8gf-ampbf16-adamw-b32", "regnet_y_8gf", "amp_bf16", 32, opt="adamw"),
    tv("hv-resnext101_32x8d-ampbf16-sgdmom-b16", "resnext101_32x8d", "amp_bf16", 16),
    tv("hv-wide_resnet101_2-ampbf16-sgdmom-b32", "wide_resnet101_2", "amp_bf16", 32),
    tv("hv-convnext_base-ampfp16-adamw-b64", "convnext_base", "amp_fp16", 64, opt="adamw"),
    lm2("hl-tl-bf16-lora8qv-b4s2048", "tl", "bf16", 4, 2048, lora=lora(8, ["q_proj", "v_proj"])),
    lm2("hl-l1b-ampbf16-lora16all-b8s1024-ckpt", "l1b", "amp_bf16", 8, 1024, ckpt=True, lora=lora(16, LORA_ALL)),
    lm2("hf-q3_17-bf16-adamw-b4s2048-ckpt", "q3_17", "bf16", 4, 2048, ckpt=True),
    lm2("hf-phi3m-bf16-lora16all-b2s2048-ckpt", "phi3m", "bf16", 2, 2048, ckpt=True,
        lora=lora(16, ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"])),
]

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    for name, cases in (("timing2-input.jsonl", TUNE), ("timing2-holdout-input.jsonl", HOLD)):
        with open(os.path.join(here, name), "w") as f:
            for c in cases:
                if name.startswith("timing2-holdout"):
                    c["holdout"] = True
                f.write(json.dumps(c) + "\n")
