#!/usr/bin/env python3
"""Family set 44 (SegFormer again, transformers 5.17's defaults): the attention through SDPA (the class sets
_supports_sdpa, so a default from_config / from_pretrained runs it) and gradient checkpointing (SegformerLayer is a
GradientCheckpointingLayer), which set 37 (eager only) never ran; plus one eager checkpointed row. Written after
the twenty-ninth session re-read the installed modeling_segformer.py (notes-f37/segformer.md) and predicted before
any device saw it. Widths: MiT-b0 (nvidia/segformer-b0-finetuned-ade-512-512), MiT-b1, MiT-b2 (decode head 768).
Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from the prediction at the
commit that adds this file, then frozen).
Usage: python3 calibrate/cases/make_families44.py > calibrate/cases/families44-input.jsonl"""
import json

CAP_LO, CAP_HI = 4.8, 7.2  # the uncapped first row predicted 5090.5 MiB allocated, 7108 reserved (this commit)

COMMON = {"num_attention_heads": [1, 2, 5, 8], "sr_ratios": [8, 4, 2, 1], "patch_sizes": [7, 3, 3, 3],
          "strides": [4, 2, 2, 2], "mlp_ratios": [4, 4, 4, 4]}
B0 = dict(COMMON, hidden_sizes=[32, 64, 160, 256], depths=[2, 2, 2, 2], decoder_hidden_size=256)
B1 = dict(COMMON, hidden_sizes=[64, 128, 320, 512], depths=[2, 2, 2, 2], decoder_hidden_size=256)
B2 = dict(COMMON, hidden_sizes=[64, 128, 320, 512], depths=[3, 4, 6, 3], decoder_hidden_size=768)


def row(id_, widths, labels, image, mode, b, prec, attn="sdpa", seg=True, opt="adamw", ckpt=False, cap=None):
    cfg = dict(widths, num_labels=labels, image_size=image)
    r = {"id": id_, "model": {"source": "huggingface", "model_type": "segformer", "config": cfg,
                              "attn_implementation": attn},
         "mode": mode, "batch_size": b, "precision": prec}
    if mode == "training":
        r.update({"optimizer": opt, "optimizer_impl": "foreach", "grad_checkpointing": ckpt, "grad_accum_steps": 1})
    if seg:
        r["task"] = "semantic_seg"
    r["holdout"] = True
    if cap is not None:
        r["memory_cap_gib"] = cap
    return r


rows = [
    row("f44-segb0-ade512-ampbf16-adamw-b8-sdpa", B0, 150, 512, "training", 8, "amp_bf16"),
    row("f44-segb2-ade512-bf16-adamw-b4-sdpa", B2, 150, 512, "training", 4, "bf16"),
    row("f44-segb2-city1024-ampbf16-sgdmom-b2-sdpa-ckpt", B2, 19, 1024, "training", 2, "amp_bf16",
        opt="sgd_momentum", ckpt=True),
    row("f44-segb0-city768-fp32-adamw-b3-sdpa", B0, 19, 768, "training", 3, "fp32"),
    row("f44-segb1-ade640-ampfp16-adamw-b5-sdpa", B1, 150, 640, "training", 5, "amp_fp16"),
    row("f44-segb2-ade640-infer-ampbf16-b12-sdpa", B2, 150, 640, "inference", 12, "amp_bf16"),
    row("f44-segmitb1-cls-ampbf16-adamw-b48-sdpa", B1, 1000, 224, "training", 48, "amp_bf16", seg=False),
    row("f44-segb0-ade512-ampbf16-adamw-b6-eager-ckpt", B0, 150, 512, "training", 6, "amp_bf16", attn="eager",
        ckpt=True),
]
if CAP_LO is not None:
    rows += [
        row("f44-segb0-ade512-ampbf16-adamw-b8-sdpa-cap-lo", B0, 150, 512, "training", 8, "amp_bf16", cap=CAP_LO),
        row("f44-segb0-ade512-ampbf16-adamw-b8-sdpa-cap-hi", B0, 150, 512, "training", 8, "amp_bf16", cap=CAP_HI),
    ]
for r in rows:
    print(json.dumps(r))
