#!/usr/bin/env python3
"""Family set 23, Hugging Face vision backbones users fine-tune as image classifiers (AutoModelForImageClassification,
built by harness_kinds/hfvis.py): convnext, convnextv2 and swin. Random pixel_values [B, 3, S, S] with S the
config's image_size (fp32 under amp), one random label per image, the model's own loss; inference: one forward of
the classifier under inference_mode (harness _infer_forward).
Widths: facebook/convnext-tiny-224 (96/192/384/768, depths 3/3/9/3), facebook/convnext-base-224(-22k)
(128/256/512/1024, depths 3/3/27/3; 21841 labels for -22k), facebook/convnextv2-tiny-1k-224 / -base-1k-224 (the same
widths, GRN instead of the layer scale), microsoft/swin-tiny-patch4-window7-224 (embed 96, depths 2/2/6/2, heads
3/6/12/24, window 7), microsoft/swin-base-patch4-window12-384 (embed 128, depths 2/2/18/2, heads 4/8/16/32, window 12,
384 px). Swin's drop_path_rate is the config default 0.1 (as published): stochastic depth is live in training.
ConvNeXt has no gradient checkpointing (supports_gradient_checkpointing unset); Swin has it (stages and layers are
both GradientCheckpointingLayer) and both eager and sdpa attention.
tuning(): ids f23-<short>-*, measured with whole-run recordings before the builders are checked against them;
holdout(): ids f24-<short>-*, other shapes and settings, predicted at the final commit and measured blind.
Usage: python3 hfvis.py   (JSONL: tuning, then holdout)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf  # noqa: E402

CNX_T = {"hidden_sizes": [96, 192, 384, 768], "depths": [3, 3, 9, 3], "image_size": 224, "num_labels": 1000}
CNX_B = {"hidden_sizes": [128, 256, 512, 1024], "depths": [3, 3, 27, 3], "image_size": 224, "num_labels": 1000}
CNX_B22K = dict(CNX_B, num_labels=21841)
CNX2_T_DP = dict(CNX_T, drop_path_rate=0.1)
CNX2_B = dict(CNX_B)
SWIN_T = {"embed_dim": 96, "depths": [2, 2, 6, 2], "num_heads": [3, 6, 12, 24], "window_size": 7, "image_size": 224,
          "num_labels": 1000}
SWIN_T256 = dict(SWIN_T, image_size=256)  # 64 / 32 / 16 / 8 patches a side: every stage padded to the window (7)
SWIN_B384 = {"embed_dim": 128, "depths": [2, 2, 18, 2], "num_heads": [4, 8, 16, 32], "window_size": 12,
             "image_size": 384, "num_labels": 1000}
SWIN_B224 = dict(SWIN_B384, window_size=7, image_size=224)


def _attn(model_type):
    """ConvNeXt (V1 and V2) has no attention and no SDPA support (_supports_sdpa unset): from_config with
    attn_implementation="sdpa" raises there, so its cases name eager, the implementation it resolves to."""
    return "eager" if model_type in ("convnext", "convnextv2") else "sdpa"


def train(id, model_type, config, batch, precision, attn=None, ckpt=False, accum=1, est=4.0):
    """An image classifier trained with AdamW (foreach): the image size comes from the config (no image_size key)."""
    return {"id": id, "model": hf(model_type, config, attn or _attn(model_type)), "mode": "training", "batch_size": batch,
            "precision": precision, "optimizer": "adamw", "optimizer_impl": "foreach", "grad_checkpointing": ckpt,
            "grad_accum_steps": accum, "_est_gib": est}


def infer(id, model_type, config, batch, precision, attn=None, est=2.0):
    """An image classifier served: one forward under inference_mode."""
    return {"id": id, "model": hf(model_type, config, attn or _attn(model_type)), "mode": "inference", "batch_size": batch,
            "precision": precision, "_est_gib": est}


def tuning():
    return [
        train("f23-cnx-t-fp32-b48", "convnext", CNX_T, 48, "fp32", est=11),
        train("f23-cnx-b22k-ampbf16-b25", "convnext", CNX_B22K, 25, "amp_bf16", est=10),
        train("f23-cnx2-t-ampfp16-b33-acc2-dp", "convnextv2", CNX2_T_DP, 33, "amp_fp16", accum=2, est=8),
        train("f23-swin-t-fp32-b24-i256-eager", "swin", SWIN_T256, 24, "fp32", attn="eager", est=9),
        train("f23-swin-b384-bf16-b7-ckpt", "swin", SWIN_B384, 7, "bf16", ckpt=True, est=4),
        infer("f23-swin-t-infer-ampfp16-b96", "swin", SWIN_T, 96, "amp_fp16", est=3),
    ]


def holdout():
    return [
        train("f24-cnx2-b-bf16-b21", "convnextv2", CNX2_B, 21, "bf16", est=8),
        train("f24-swin-b-ampbf16-b20-acc2", "swin", SWIN_B224, 20, "amp_bf16", accum=2, est=12),
        infer("f24-cnx-b-infer-fp32-b40", "convnext", CNX_B, 40, "fp32", est=3),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
