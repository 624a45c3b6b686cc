#!/usr/bin/env python3
"""Family set 26 (twentieth session), held out: three mechanisms found on the ConvNeXt whole-run recordings of sets
23 / 24, tested on shapes and settings nobody measured, every row predicted at a commit before the call that
measures it.
- A ConvNeXt conv after the stem has channels-last input (the stem's LayerNorm permutes back), and cuDNN runs
  other engines for it than for a contiguous input: the fp32 depthwise 7x7 wgrad asks for ~8x the activation
  (450.48 MiB at 96 ch, 56 x 56, b48). The workspace table now carries a layout column measured channels-last.
- The channels-last conv's bias gradient is a column reduction of [N * OH * OW, C] with a staging buffer.
- ConvNextV2's GRN: vector_norm over (H, W) stages partial sums in a global buffer when the image is large, and its
  backward keeps the x-sized quotient self / norm.
Hugging Face rows (harness_kinds/hfvis.py) at odd batches, widths atto .. base, 224 and 384 px; torchvision rows
(ConvNeXt T / S / B) in fp32 and bf16. Usage: python3 convnext.py  (JSONL)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, vision  # noqa: E402


def cfg(widths, depths, image=224):
    return {"hidden_sizes": widths, "depths": depths, "image_size": image, "num_labels": 1000}


CNX_T = cfg([96, 192, 384, 768], [3, 3, 9, 3])
CNX_S = cfg([96, 192, 384, 768], [3, 3, 27, 3])
CNX_B384 = cfg([128, 256, 512, 1024], [3, 3, 27, 3], 384)
CNX2_ATTO = cfg([40, 80, 160, 320], [2, 2, 6, 2])
CNX2_NANO = cfg([80, 160, 320, 640], [2, 2, 8, 2])
CNX2_PICO384 = cfg([64, 128, 256, 512], [2, 2, 6, 2], 384)
CNX2_T = cfg([96, 192, 384, 768], [3, 3, 9, 3])


def train(id, model_type, config, batch, precision, optimizer="adamw", est=4.0):
    return {"id": id, "model": hf(model_type, config, "eager"), "mode": "training", "batch_size": batch,
            "precision": precision, "optimizer": optimizer, "optimizer_impl": "foreach", "grad_checkpointing": False,
            "grad_accum_steps": 1, "_est_gib": est}


def holdout():
    return [
        train("f26-cnx-t-fp32-b20", "convnext", CNX_T, 20, "fp32", est=4),
        train("f26-cnx-s-fp32-b13-sgd", "convnext", CNX_S, 13, "fp32", optimizer="sgd_momentum", est=4),
        train("f26-cnx2-atto-fp32-b56", "convnextv2", CNX2_ATTO, 56, "fp32", est=6),
        train("f26-cnx2-nano-bf16-b37", "convnextv2", CNX2_NANO, 37, "bf16", est=5),
        train("f26-cnx2-t-ampbf16-b45", "convnextv2", CNX2_T, 45, "amp_bf16", est=8),
        train("f26-cnx2-pico384-fp32-b12", "convnextv2", CNX2_PICO384, 12, "fp32", est=8),
        train("f26-cnx-b384-ampfp16-b6", "convnext", CNX_B384, 6, "amp_fp16", est=5),
        dict(vision("f26-tv-cnxt-fp32-b24", "convnext_tiny", 24, "fp32", "adamw"), _est_gib=5),
        dict(vision("f26-tv-cnxs-fp32-b10", "convnext_small", 10, "fp32", "sgd_momentum"), _est_gib=4),
        dict(vision("f26-tv-cnxb-bf16-b20", "convnext_base", 20, "bf16", "adamw"), _est_gib=5),
    ]


if __name__ == "__main__":
    for c in holdout():
        print(json.dumps(c))
