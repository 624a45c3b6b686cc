#!/usr/bin/env python3
"""Family set 27 (twenty-first session), held out: ConvNeXt in fp32 at batches between the ones the channels-last
depthwise workspace table had held before this session. cuDNN's fp32 channels-last depthwise wgrad engine changes
with the batch, and not monotonically (192 ch 28 x 28: a workspace of (8n + c) x one sample's activation at n 8 and
16, none at n 10). The table now holds every batch 1 .. 32 of the torchvision ConvNeXt T / S / B / L shapes at
224 px and of the Hugging Face 96 / 128 / 192 widths at 384 px (raw/h200-conv-workspace-cl-fp32-dense2 / -dense3).
Each row below sits at a batch where interpolating the old table's rows (n 1, 4, 8, 16, 24, 32, ...) would have
given another answer; two 16-bit rows are controls. Every row is predicted at a commit before the call that
measures it. Usage: python3 convnext_batches.py  (JSONL)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import load_case_module, vision  # noqa: E402

_set26 = load_case_module("families26", "convnext")  # the same Hugging Face config and training-row helpers
cfg, train = _set26.cfg, _set26.train

CNX_T = cfg([96, 192, 384, 768], [3, 3, 9, 3])
CNX_S = cfg([96, 192, 384, 768], [3, 3, 27, 3])
CNX_T384 = cfg([96, 192, 384, 768], [3, 3, 9, 3], 384)
CNX2_B = cfg([128, 256, 512, 1024], [3, 3, 27, 3])
CNX2_T384 = cfg([96, 192, 384, 768], [3, 3, 9, 3], 384)


def holdout():
    return [
        dict(vision("f27-tv-cnxt-fp32-b7", "convnext_tiny", 7, "fp32", "sgd_momentum"), _est_gib=3),
        dict(vision("f27-tv-cnxs-fp32-b14", "convnext_small", 14, "fp32", "adamw"), _est_gib=5),
        dict(vision("f27-tv-cnxb-fp32-b9", "convnext_base", 9, "fp32", "sgd_momentum"), _est_gib=5),
        dict(vision("f27-tv-cnxl-fp32-b5", "convnext_large", 5, "fp32", "sgd_momentum"), _est_gib=6),
        dict(vision("f27-tv-cnxt-ampbf16-b30", "convnext_tiny", 30, "amp_bf16", "adamw"), _est_gib=5),
        train("f27-cnx-t-fp32-b27", "convnext", CNX_T, 27, "fp32", est=6),
        train("f27-cnx-t384-fp32-b6", "convnext", CNX_T384, 6, "fp32", est=5),
        train("f27-cnx2-b-fp32-b11", "convnextv2", CNX2_B, 11, "fp32", optimizer="sgd_momentum", est=6),
        train("f27-cnx-s-ampbf16-b19", "convnext", CNX_S, 19, "amp_bf16", est=5),
        train("f27-cnx2-t384-fp32-b5", "convnextv2", CNX2_T384, 5, "fp32", est=5),
    ]


if __name__ == "__main__":
    for c in holdout():
        print(json.dumps(c))
