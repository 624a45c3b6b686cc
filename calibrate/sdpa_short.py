#!/usr/bin/env python3
"""SDPA rates at the short sequences vision and encoder models run (issue 17 part 3): the rows op_rates.py lacks.

Why: op_rates.py measured F.scaled_dot_product_attention at S = 512 .. 4096 only; the engine takes the nearest
row, so ViT (S = 197, 50), Swin (windows of 49 / 64 tokens, head dim 32) and short LM contexts ran at the
S = 512 rate. ViT-L/16 b24's profiled attention kernels took 2.03 ms (held out 3, 2026-12-01) where the model,
at the 512 row, gave 0.65.

What: forward and forward + backward of SDPA at S in {49, 64, 128, 197, 256}, head dim 32 / 64 / 128, causal and
not (bf16; fp32 non-causal at 64 / 197 for the fp32 rows), default backend, B chosen so one call is ~8 GFLOP of
forward work (launch rate not timed: op_rates.timed runs back-to-back calls between CUDA events). Same FLOP
convention as op_rates.sdpa (4 B H S^2 D, half when causal; backward 2.5x forward).

    python3 calibrate/sdpa_short.py OUT.json          (GPU machine)
The rows are merged into data/calibration/h200-op-rates.tsv by `op_rates.py --table IN.json OUT.tsv --extra OUT.json`.
"""
import math
import sys

import op_rates


def main():
    import torch
    H = 16
    plan = [("bf16", torch.bfloat16, d, s_, c) for d in (32, 64, 128) for s_ in (49, 64, 128, 197, 256)
            for c in (False, True)]
    plan += [("fp32", torch.float32, 64, s_, False) for s_ in (64, 197)]
    plan = [(n, dt, d, s_, c, max(1, min(8192, int(math.ceil(8e9 / (4.0 * H * s_ * s_ * d))))), False)
            for n, dt, d, s_, c in plan]
    op_rates.sdpa_table("sdpa_short", "memplan-sdpa-short/1", plan, sys.argv[1],
                        "4 B H S^2 D, x0.5 when causal; bwd counted as 2.5 x fwd FLOPs")


if __name__ == "__main__":
    main()
