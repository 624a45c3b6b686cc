#!/usr/bin/env python3
"""SDPA rates at the head dimensions op_rates.py does not measure (issue 17 part 3): 80, 96, 192, 256.

Why: op_rates.py measured F.scaled_dot_product_attention at head dim 64 and 128 only, and the engine takes the
nearest row. Phi-3-mini (head dim 96) trained at s4096 (held out 6, 2026-12-02) ran its cuDNN flash kernels at
~134 TFLOP/s forward where the d = 128 row says 521: the profiled step spent 122 ms in attention kernels where the
model costs ~30, and the step was under-predicted by 25 %. Gemma-2 / Gemma-3 run head dim 256, DeepSeek's MLA
192 (q, k) over 128 (v; costed at d = 192 here), Phi-2 / StableLM 80.

What: forward and forward + backward at S in {512, 1024, 2048, 4096}, causal and not, bf16, and fp16 causal;
B = 16384 / S, H = 16 (op_rates.sdpa's shapes); default backend, op_rates.sdpa_rate's FLOP convention (4 B H S^2 D,
half when causal; backward 2.5x forward).

    python3 calibrate/sdpa_headdim.py OUT.json          (GPU machine, ~1 min)
Merged into data/calibration/h200-op-rates.tsv by `op_rates.py --table IN.json OUT.tsv --extra OUT.json`.
"""
import sys

import op_rates


def main():
    import torch
    plan = [("bf16", torch.bfloat16, d, s_, c) for d in (80, 96, 192, 256) for s_ in (512, 1024, 2048, 4096)
            for c in (True, False)]
    plan += [("fp16", torch.float16, d, s_, True) for d in (80, 96, 192, 256) for s_ in (512, 1024, 2048, 4096)]
    op_rates.sdpa_table("sdpa_headdim", "memplan-sdpa-headdim/1",
                        [(n, dt, d, s_, c, max(1, 16384 // s_), False) for n, dt, d, s_, c in plan], sys.argv[1],
                        "4 B H S^2 D, x0.5 when causal; bwd counted as 2.5 x fwd FLOPs")


if __name__ == "__main__":
    main()
