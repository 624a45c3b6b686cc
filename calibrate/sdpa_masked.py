#!/usr/bin/env python3
"""SDPA rates with an explicit mask (issue 17 part 3): what attention runs at when transformers passes a mask.

Why: Phi-3-mini (sliding_window 2047) trained at s4096 (held out 6, 2026-12-02) ran 0.77 ms of forward and
2.24 ms of backward attention kernels per layer in its profiled step; the same shape timed alone with is_causal
(calibrate/runs/timing15_run.sh) took 0.26 and 0.74. With a sliding window (or padding) transformers hands SDPA a
boolean mask instead of is_causal, SDPA turns it into an additive bias, and the fused kernel computes every
score block (no causal skipping) and reads the bias.

What: forward and forward + backward of F.scaled_dot_product_attention(q, k, v, attn_mask=M) with M a boolean
[B, 1, S, S] sliding-window causal mask (window S / 2, as a mask of any pattern costs the same: the kernel skips
nothing), bf16 (and fp16 at head dim 64 / 128), head dim 64 / 96 / 128 / 256, S = 512 .. 4096, B = 16384 / S,
H = 16, default backend. FLOPs counted as op_rates.sdpa_rate counts a non-causal call (4 B H S^2 D; backward 2.5x).

    python3 calibrate/sdpa_masked.py OUT.json          (GPU machine, ~1 min)
Merged into data/calibration/h200-op-rates.tsv as `sdpa_masked` rows by `op_rates.py --table ... --extra OUT.json`.
The timing is op_rates.sdpa_rate's with masked=True (the committed h200-sdpa-masked.json was measured by this
script's first version, which timed the same calls in its own copy of that loop).
"""
import sys

import op_rates


def main():
    import torch
    plan = [("bf16", torch.bfloat16, d, s_) for d in (64, 96, 128, 256) for s_ in (512, 1024, 2048, 4096)]
    plan += [("fp16", torch.float16, d, s_) for d in (64, 128) for s_ in (1024, 4096)]
    op_rates.sdpa_table("sdpa_masked", "memplan-sdpa-masked/1",
                        [(n, dt, d, s_, False, max(1, 16384 // s_), True) for n, dt, d, s_ in plan], sys.argv[1],
                        "4 B H S^2 D (no causal halving: the masked kernel computes every block); bwd 2.5 x fwd")


if __name__ == "__main__":
    main()
