#!/usr/bin/env python3
"""Third step-time set, held out (issue 17 part 3; written 2026-12-01 with no GPU lent): writes
calibrate/cases/timing3-holdout-input.jsonl. Pre-registered: predicted by the committed model
(data/validation/predictions/timing3-holdout-at-650648d.json) and committed before anything is measured; measured
by calibrate/runs/timing7_run.sh with --quiet. Both earlier held-out sets have been read, so this is the only blind one.

Every model or setting here is absent from data/validation/h200-timing.jsonl (tuning, held out 1, held out 2):
other torchvision sizes and families, odd batch sizes, amp fp16 convolutions, zoo transformer families timed never
or only at other settings, LoRA ranks / target sets with and without checkpointing, accumulation, eager vs sdpa,
inference prefill and decode. Transformer configs are the zoo's own files (models/zoo/<name>.json, full depth) less
the bookkeeping keys that would change how the harness builds the model (torch_dtype would set the build dtype in
from_config). Memory checked with memplan first: every predicted peak reserved leaves room on the H200's 140 GiB
(the largest, Gemma-2 eager, 72 GiB; the next 46 GiB; the predictions file has each), and each case's wall time in
the harness is a few seconds (the earlier sets' steps of this size took 1-8 s each, build included).
Channels-last inputs are not expressible in the case format (CASE-FORMAT.md has no layout key; timing_corpus.py
feeds NCHW), so the layout question is left out; fp32 vs amp at one shape is asked instead.

Why each case is here (GPU-bound = kernels dominate the step; host-bound = Python / dispatch dominates):
  hv3-resnext101_64x4d-ampbf16-sgdmom-b48   new size of a timed family (64 groups x 4); odd batch 48 between the
                                            conv table's 32 and 128 rows; GPU-bound grouped 3x3 convs
  hv3-resnext101_64x4d-fp32-sgdmom-b48      the same step in fp32 (cuDNN's default TF32 convs, fp32 GEMM):
                                            precision pair, the fp32 conv rows of the table
  hv3-vgg19_bn-ampfp16-sgdmom-b40           amp fp16 convolutions with GradScaler, the BN variant of VGG (VGG is
                                            the known -16 % miss: biased convs, in-place ReLU, pools), odd batch
  hv3-densenet201-ampbf16-sgdmom-b24        host-bound: the deepest DenseNet at a small batch (many small ops)
  hv3-regnet_y_400mf-ampbf16-sgdmom-b16     strongly host-bound: tiny convs and SE blocks, little GPU work
  hv3-efficientnet_b4-ampbf16-adamw-b40     depthwise + squeeze-excitation (the family with the largest vision
                                            misses) at a size never timed, 224 px, AdamW over 19 M parameters
  hv3-swin_v2_t-ampbf16-adamw-b48           Swin V2 (log-spaced CPB MLP, cosine attention): never timed; mixed
  hv3-vit_l_16-ampbf16-adamw-b24            GEMM-bound vision transformer at a new size (304 M), odd batch
  hl3-phi3mini-bf16-lora8attn-b4s1024       LoRA r8 on attention only (fused qkv_proj + o_proj), no checkpointing
  hl3-l3b-bf16-lora64all-b4s2048-ckpt       LoRA at a high rank (64) on all linears with checkpointing, Llama-3.2-3B
  hl3-mistral7b-bf16-lora16qv-b1s2048       7B LoRA on q / v, batch 1, no checkpointing: frozen-base GEMMs (dgrad
                                            only) at their largest, GQA 8 kv heads
  hf3-qwen3_4b-bf16-adamw-b2x2s2048-ckpt    full fine-tune of Qwen3-4B with accumulation (2 micro-batches) and
                                            checkpointing: micro-batch constant, recompute, 4 B-parameter AdamW
  hf3-olmo2_1b-ampbf16-adamw-b4s1024        OLMo-2 (q / k RMSNorm over the whole projection), sdpa ...
  hf3-olmo2_1b-ampbf16-adamw-b4s1024-eager  ... and the same step with eager attention: the eager vs sdpa pair
  hf3-gemma2_2b-ampbf16-adamw-b3s1024-eager Gemma-2 (soft-capping: eager, as HF recommends), 256 k vocabulary,
                                            odd batch 3
  hf3-pythia1_4b-ampfp16-adamw-b6s1024      GPT-NeoX under amp fp16 with GradScaler (fp16 rows were under-
                                            predicted), parallel residual, partial rotary
  hi3-q3_17-infer-bf16-b4s2048-g32          inference: prefill GPU-bound, decode per token host-bound (Qwen3-1.7B)
  hi3-gemma3_1b-infer-bf16-b8s1024-g32      inference with sliding-window layers (5 of 6) and a 262 k vocabulary
"""
import json
import os

from make_timing import tv

HERE = os.path.dirname(os.path.abspath(__file__))
ZOO = os.path.join(HERE, "..", "..", "models", "zoo")
# keys of a published config.json that are not the model's shape: torch_dtype / dtype would make from_config
# build in that dtype instead of the case's precision; model_type lives in the case's model dict.
BOOKKEEPING = ("architectures", "torch_dtype", "dtype", "transformers_version", "use_cache", "model_type")


def zoo(name, attn="sdpa"):
    cfg = json.load(open(os.path.join(ZOO, name + ".json")))
    mt = cfg["model_type"]
    return {"source": "huggingface", "model_type": mt,
            "config": {k: v for k, v in sorted(cfg.items()) if k not in BOOKKEEPING}, "attn_implementation": attn}


def train(cid, name, prec, b, s, opt="adamw", impl="foreach", ckpt=False, ga=1, attn="sdpa", lora=None):
    c = {"id": cid, "model": zoo(name, attn), "mode": "training", "batch_size": b, "seq_len": s, "precision": prec,
         "optimizer": opt, "optimizer_impl": impl, "grad_checkpointing": ckpt, "grad_accum_steps": ga}
    if lora:
        c["lora"] = lora
    return c


def infer(cid, name, prec, b, s, g):
    return {"id": cid, "model": zoo(name), "mode": "inference", "batch_size": b, "seq_len": s, "precision": prec,
            "generate_tokens": g}


def lora(r, targets, alpha=None, dropout=0.05):
    return {"r": r, "alpha": alpha or 2 * r, "dropout": dropout, "target_modules": targets}


LLAMA_ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]

HOLD = [
    tv("hv3-resnext101_64x4d-ampbf16-sgdmom-b48", "resnext101_64x4d", "amp_bf16", 48),
    tv("hv3-resnext101_64x4d-fp32-sgdmom-b48", "resnext101_64x4d", "fp32", 48),
    tv("hv3-vgg19_bn-ampfp16-sgdmom-b40", "vgg19_bn", "amp_fp16", 40),
    tv("hv3-densenet201-ampbf16-sgdmom-b24", "densenet201", "amp_bf16", 24),
    tv("hv3-regnet_y_400mf-ampbf16-sgdmom-b16", "regnet_y_400mf", "amp_bf16", 16),
    tv("hv3-efficientnet_b4-ampbf16-adamw-b40", "efficientnet_b4", "amp_bf16", 40, opt="adamw"),
    tv("hv3-swin_v2_t-ampbf16-adamw-b48", "swin_v2_t", "amp_bf16", 48, opt="adamw"),
    tv("hv3-vit_l_16-ampbf16-adamw-b24", "vit_l_16", "amp_bf16", 24, opt="adamw"),
    train("hl3-phi3mini-bf16-lora8attn-b4s1024", "phi-3-mini", "bf16", 4, 1024,
          lora=lora(8, ["qkv_proj", "o_proj"])),
    train("hl3-l3b-bf16-lora64all-b4s2048-ckpt", "llama-3.2-3b", "bf16", 4, 2048, ckpt=True,
          lora=lora(64, LLAMA_ALL, alpha=64)),
    train("hl3-mistral7b-bf16-lora16qv-b1s2048", "mistral-7b", "bf16", 1, 2048, lora=lora(16, ["q_proj", "v_proj"])),
    train("hf3-qwen3_4b-bf16-adamw-b2x2s2048-ckpt", "qwen3-4b", "bf16", 2, 2048, ckpt=True, ga=2),
    train("hf3-olmo2_1b-ampbf16-adamw-b4s1024", "olmo-2-1b", "amp_bf16", 4, 1024),
    train("hf3-olmo2_1b-ampbf16-adamw-b4s1024-eager", "olmo-2-1b", "amp_bf16", 4, 1024, attn="eager"),
    train("hf3-gemma2_2b-ampbf16-adamw-b3s1024-eager", "gemma-2-2b", "amp_bf16", 3, 1024, attn="eager"),
    train("hf3-pythia1_4b-ampfp16-adamw-b6s1024", "pythia-1.4b", "amp_fp16", 6, 1024),
    infer("hi3-q3_17-infer-bf16-b4s2048-g32", "qwen3-1.7b", "bf16", 4, 2048, 32),
    infer("hi3-gemma3_1b-infer-bf16-b8s1024-g32", "gemma-3-1b", "bf16", 8, 1024, 32),
]

if __name__ == "__main__":
    with open(os.path.join(HERE, "timing3-holdout-input.jsonl"), "w") as f:
        for c in HOLD:
            c["holdout"] = True
            f.write(json.dumps(c) + "\n")
    print(len(HOLD))
