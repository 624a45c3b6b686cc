#!/usr/bin/env python3
"""The GEMM rate grid at factor-2 spacing (issue 17 part 3, eighth session): op_rates.py's grid (128, 512, 2048,
8192, 32768) steps by 4x, and the rate is far from log-linear between its points: at m 16384 the measured bf16
rate rises from ~300 (n = k = 512) to ~690 TFLOP/s (2048), so BERT-large's and GPT-2 medium's 1024-wide GEMMs
interpolated to ~520 where their profiled kernels ran ~750 (held out 6 / 8's profiles, 2026-12-02: addmm costed
68 ms against 51 of kernels). Same measurement as op_rates.gemm (F.linear(x[m, k], w[n, k]), forward, CUDA
events), on 128 .. 32768 by factors of 2; fp32 (TF32 off) and fp16 only where op_rates measured them (fp32 up to
3 TFLOP per call, fp16 from 512 and up to 3 TFLOP); the loader fills the rest.

    python3 calibrate/gemm_grid.py OUT.json [--deadline-s S]       (GPU machine, ~3 min)
Merged into data/calibration/h200-op-rates.tsv by `op_rates.py --table ... --extra OUT.json`: its dims and
tables replace the main file's gemm section.
"""
import json
import sys
import time

import op_rates


def main():
    import torch
    import torch.nn.functional as F
    torch.cuda.init()
    torch.backends.cuda.matmul.allow_tf32 = False
    deadline = float(sys.argv[sys.argv.index("--deadline-s") + 1]) if "--deadline-s" in sys.argv else 1e9
    dims = [128 << i for i in range(9)]  # 128 .. 32768
    t0 = time.time()
    res = {"schema": "memplan-gemm-grid/1", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "dims": dims,
           "layout": "F.linear(x[m,k], w[n,k]) -> [m,n]", "tflops": {}}
    for name, dt in (("bf16", torch.bfloat16), ("fp32", torch.float32), ("fp16", torch.float16)):
        table = []
        for m in dims:
            for n in dims:
                for k in dims:
                    fl = 2.0 * m * n * k
                    skip = (dt == torch.float32 and fl > 3e12) or (name == "fp16" and (fl > 3e12 or min(m, n, k) < 512))
                    if skip or time.time() - t0 > deadline:
                        table.append(None)
                        continue
                    x = torch.randn(m, k, device="cuda", dtype=dt)
                    w = torch.randn(n, k, device="cuda", dtype=dt)
                    s = op_rates.timed(lambda: F.linear(x, w), reps=3)
                    table.append(round(fl / s / 1e12, 2))
                    del x, w
        res["tflops"][name] = table
        print("[gemm_grid] %s done at %.0f s (%d of %d measured)" % (
            name, time.time() - t0, sum(v is not None for v in table), len(table)), flush=True)
        torch.cuda.empty_cache()
    res["wall_s"] = round(time.time() - t0, 1)
    json.dump(res, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
