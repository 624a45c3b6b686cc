#!/usr/bin/env python3
"""LayerNorm and reductions by row length (issue 17 part 3): what they run at against the row's size.

Why: the profiled steps of ConvNeXt-T b192 and Swin-T b64 spend 12.6 / 5.6 ms in LayerNorm's kernels
(vectorized_layer_norm_kernel, layer_norm_grad_input_kernel, GammaBetaBackward) where the model, costing them
by bytes at the elementwise bandwidth, has 4.5 / 2.0: their rows are 96 .. 768 channels long. And their reduce
kernels (the gradients of biases and of broadcast weights: a sum over every dimension but the last, 5.6 / 2.4 ms)
are not costed at all. This times both against the row length N over a fixed number of elements.

    python3 calibrate/norm_reduce.py OUT.json     (GPU machine, ~60 s)

Rows (op_rates.timed: back-to-back calls between CUDA events, median of 5):
  layer_norm  dtype N M: forward (native_layer_norm with weight and bias), backward of the input only, backward
              with the weight and bias gradients (native_layer_norm_backward, output_mask all true)
  colsum      dtype N M: x[M, N].sum(0) (a bias gradient; sum_to_size of a broadcast operand's gradient)
  rowmean     dtype N M: x[M, N].mean(-1, keepdim=True) (RMSNorm's variance)
  clone       dtype M*N: the contiguous copy of the same bytes (the bandwidth they are compared with)
Microseconds per call and nanoseconds per element.
"""
import json
import sys
import time

import op_rates

NS = (32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192)


def main():
    import torch
    torch.cuda.init()
    rows = []

    def row(op, dt, n, m, fn, **extra):
        t = op_rates.timed(fn)
        r = {"op": op, "dtype": dt, "n": n, "m": m, "us": round(t * 1e6, 3), "ns_per_elem": t * 1e9 / (n * m)}
        r.update(extra)
        rows.append(r)
        print("[norm] %-10s %-4s N %5d M %8d %10.2f us %.5f ns/elem" % (op, dt, n, m, r["us"], r["ns_per_elem"]),
              flush=True)

    for dt_name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        for total in (1 << 25, 1 << 22):
            x = torch.randn(total, device="cuda", dtype=dt)
            row("clone", dt_name, total, 1, lambda: x.clone())
            del x
            for n in NS:
                m = total // n
                x = torch.randn(m, n, device="cuda", dtype=dt)
                w = torch.randn(n, device="cuda", dtype=dt)
                b = torch.randn(n, device="cuda", dtype=dt)
                gy = torch.randn_like(x)
                y, mean, rstd = torch.native_layer_norm(x, [n], w, b, 1e-5)
                row("ln_fwd", dt_name, n, m, lambda: torch.native_layer_norm(x, [n], w, b, 1e-5))
                row("ln_bwd_input", dt_name, n, m, lambda: torch.ops.aten.native_layer_norm_backward(
                    gy, x, [n], mean, rstd, w, b, [True, False, False]))
                row("ln_bwd_all", dt_name, n, m, lambda: torch.ops.aten.native_layer_norm_backward(
                    gy, x, [n], mean, rstd, w, b, [True, True, True]))
                row("colsum", dt_name, n, m, lambda: x.sum(0))
                row("rowmean", dt_name, n, m, lambda: x.mean(-1, keepdim=True))
                del x, w, b, gy, y, mean, rstd
    json.dump({"schema": "memplan-norm-reduce/1", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": rows},
              open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
