#!/usr/bin/env python3
"""GEMM rate when a dimension is not a multiple of 8 (issue 17 part 3, 2026-12-01): gemm_layout.py found GPT-2's
lm head (8192 x 1024 x 50257, bf16) at 92 TFLOP/s forward where aligned shapes of that size run at ~500; cuBLAS
takes narrow-alignment kernels when a leading dimension is not a multiple of 16 bytes. Measured here: F.linear
forward and forward + backward (input and weight gradients, as a lm head runs) for vocabulary-like n (odd,
even but not a multiple of 8, aligned) at several m, k and dtypes.
    python3 calibrate/gemm_align.py OUT.json       (GPU machine, ~20 s)
    python3 calibrate/gemm_align.py --table IN.json data/calibration/h200-gemm-align.tsv
The table: per 16-bit dtype and alignment class of the layer's n and k (odd; even but not a multiple of 8) the
median forward TFLOP/s and the backward's (input + weight gradients: 2x the forward FLOPs over forward +
backward time less the forward's). Aligned shapes are the op-rate grid's; fp32 (no TF32) showed no difference.
"""
import json
import statistics
import sys
import time

import table_io

NS = [50257, 50304, 30522, 30528, 49999, 32001, 32000, 151936, 151935, 12345, 12352]
MK = [(4096, 768), (8192, 1024), (4096, 1600), (8192, 2048)]


def write_table(in_path, out_path):
    with open(in_path) as f:
        d = json.load(f)
    lines = table_io.header("memplan-gemm-align/1: 16-bit GEMM rates when the layer's n or k is not a multiple of 8 "
                            "(calibrate/gemm_align.py)", d["environment"],
                            "gemm_align dtype class(odd|even) forward_tflops backward_tflops cases")
    for dt in ("bf16", "fp16"):
        for cls, test in (("odd", lambda n: n % 2 == 1), ("even", lambda n: n % 2 == 0 and n % 8 != 0)):
            rs = [r for r in d["rows"] if r["dtype"] == dt and test(r["n"])]
            if not rs:
                continue
            f = statistics.median(r["fwd_tflops"] for r in rs)
            b = statistics.median(4 * r["m"] * r["n"] * r["k"] / ((r["fwd_bwd_us"] - r["fwd_us"]) * 1e6) for r in rs)
            lines.append(f"gemm_align {dt} {cls} {f:.1f} {b:.1f} {len(rs)}")
    table_io.write(out_path, lines)


def main():
    if table_io.table_mode(sys.argv, write_table):
        return
    import torch
    import torch.nn.functional as F
    rows = []
    for dname, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp32", torch.float32)):
        for m, k in MK:
            for n in NS:
                if dt == torch.float32 and m * k * n > 3e11:
                    continue
                x = torch.randn(m, k, device="cuda", dtype=dt, requires_grad=True)
                w = torch.randn(n, k, device="cuda", dtype=dt, requires_grad=True)
                g = torch.randn(m, n, device="cuda", dtype=dt)
                res = {}
                for name, fn in (("fwd", lambda: F.linear(x, w)), ("fwd_bwd", lambda: F.linear(x, w).backward(g))):
                    fn()
                    torch.cuda.synchronize()
                    ts = []
                    for _ in range(3):
                        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        e0.record()
                        for _ in range(3):
                            fn()
                        e1.record()
                        torch.cuda.synchronize()
                        ts.append(1e3 * e0.elapsed_time(e1) / 3)
                    res[name] = statistics.median(ts)
                    x.grad = w.grad = None
                fl = 2.0 * m * n * k
                row = {"m": m, "k": k, "n": n, "dtype": dname, "fwd_us": round(res["fwd"], 2),
                       "fwd_bwd_us": round(res["fwd_bwd"], 2), "fwd_tflops": round(fl / res["fwd"] / 1e6, 1),
                       "fwd_bwd_tflops": round(3 * fl / res["fwd_bwd"] / 1e6, 1)}
                rows.append(row)
                print("[gemm_align] %s m %5d k %5d n %6d  fwd %8.1f us %6.1f TF/s  fwd+bwd %9.1f us %6.1f TF/s" % (
                    dname, m, k, n, row["fwd_us"], row["fwd_tflops"], row["fwd_bwd_us"], row["fwd_bwd_tflops"]), flush=True)
                del x, w, g
    with open(sys.argv[1], "w") as f:
        json.dump({"environment": {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                                   "date": time.strftime("%Y-%m-%d")}, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
