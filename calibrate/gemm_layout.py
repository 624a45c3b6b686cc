#!/usr/bin/env python3
"""GEMM time by operand layout: nn.Linear's F.linear(x, W[out, in]) against transformers' Conv1D
addmm(b, x, W[in, out]) (GPT-2, GPT-NeoX-era code) at the same (m, k, n), forward and forward + backward, as the
models run them (autograd, bias, bf16 / fp16 / fp32). Why: a profiled GPT-2 medium step (step_profile.py,
2026-12-01) ran its GEMM kernels ~1.45x longer than the op-rate grid (measured with F.linear) predicts, while the
Llama rows (F.linear, no bias) matched.

    python3 calibrate/gemm_layout.py OUT.json        (GPU machine, ~20 s)
Per shape and dtype: microseconds per forward and per forward + backward of each layout (CUDA events around
`reps` calls, median of 3 such runs), and their ratio.
"""
import json
import statistics
import sys
import time

SHAPES = [  # (m, k, n): tokens x in -> out, from GPT-2 S / M / XL, Llama-3.2-1B, TinyLlama at batch x 1024 / 2048
    (4096, 768, 2304), (4096, 768, 3072), (4096, 3072, 768), (8192, 1024, 3072), (8192, 1024, 4096),
    (8192, 4096, 1024), (8192, 1024, 1024), (4096, 1600, 4800), (4096, 1600, 6400), (4096, 6400, 1600),
    (8192, 2048, 8192), (8192, 8192, 2048), (16384, 2048, 5632), (16384, 5632, 2048), (8192, 1024, 50257),
]


def main():
    import torch
    out = {"environment": {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                           "date": time.strftime("%Y-%m-%d")}, "rows": []}
    for dname, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp32", torch.float32)):
        for m, k, n in SHAPES:
            if dt == torch.float32 and m * k * n > 2e11:
                continue
            x = torch.randn(m, k, device="cuda", dtype=dt, requires_grad=True)
            w_lin = torch.randn(n, k, device="cuda", dtype=dt, requires_grad=True)
            w_c1d = torch.randn(k, n, device="cuda", dtype=dt, requires_grad=True)
            b = torch.randn(n, device="cuda", dtype=dt, requires_grad=True)
            g = torch.randn(m, n, device="cuda", dtype=dt)
            fns = {
                "linear_fwd": lambda: torch.nn.functional.linear(x, w_lin, b),
                "conv1d_fwd": lambda: torch.addmm(b, x, w_c1d),
                "linear_fwd_bwd": lambda: torch.nn.functional.linear(x, w_lin, b).backward(g),
                "conv1d_fwd_bwd": lambda: torch.addmm(b, x, w_c1d).backward(g),
            }
            row = {"m": m, "k": k, "n": n, "dtype": dname}
            for name, fn in fns.items():
                fn()
                torch.cuda.synchronize()
                runs = []
                for _ in range(3):
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    for _ in range(5):
                        fn()
                    e1.record()
                    torch.cuda.synchronize()
                    runs.append(1e3 * e0.elapsed_time(e1) / 5)
                row[name + "_us"] = round(statistics.median(runs), 2)
                x.grad = w_lin.grad = w_c1d.grad = b.grad = None
            row["ratio_fwd"] = round(row["conv1d_fwd_us"] / row["linear_fwd_us"], 3)
            row["ratio_fwd_bwd"] = round(row["conv1d_fwd_bwd_us"] / row["linear_fwd_bwd_us"], 3)
            out["rows"].append(row)
            print("[gemm_layout] %s %6d %5d %6d  linear %8.1f / %8.1f us  conv1d %8.1f / %8.1f us  ratio %.2f / %.2f" % (
                dname, m, k, n, row["linear_fwd_us"], row["linear_fwd_bwd_us"], row["conv1d_fwd_us"],
                row["conv1d_fwd_bwd_us"], row["ratio_fwd"], row["ratio_fwd_bwd"]), flush=True)
            del x, w_lin, w_c1d, b, g
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
