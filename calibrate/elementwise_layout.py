#!/usr/bin/env python3
"""Elementwise bandwidth by operand layout (issue 17 part 3): contiguous, broadcast, permuted.

Why: the profiled steps of held out 3 (Swin-V2-T, ViT-L, ConvNeXt) spend most of their elementwise GPU time in
ATen's non-vectorized TensorIterator kernels (elementwise_kernel<128, 4> / <128, 2>, unrolled_elementwise_kernel:
direct copies of permuted views, binary ops with a broadcast operand), which the model costs at the contiguous
rate (op_rates.py's 2.94 TB/s bf16). This measures what each layout runs at.

    python3 calibrate/elementwise_layout.py OUT.json     (GPU machine, ~30 s)

Rows: op, layout, dtype, numel of the output, microseconds (op_rates.timed: back-to-back calls between CUDA
events), GB/s of (operand reads + output write) bytes.
"""
import json
import sys
import time

import op_rates


def main():
    import torch
    torch.cuda.init()
    rows = []
    for name, dt in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        for N, C, HW in ((64, 256, 32), (32, 96, 56), (128, 512, 14)):
            x = torch.randn(N, C, HW, HW, device="cuda", dtype=dt)
            y = torch.randn_like(x)
            g = torch.randn(C, 1, 1, device="cuda", dtype=dt)
            s = torch.randn(N, C, 1, 1, device="cuda", dtype=dt)
            xl = torch.randn(N, HW, HW, C, device="cuda", dtype=dt).permute(0, 3, 1, 2)  # channels-last strides
            e, n = x.element_size(), x.numel()
            cases = [
                ("add", "contiguous", lambda: x + y, 3 * n * e),
                ("mul", "broadcast_c11", lambda: x * g, 2 * n * e),
                ("mul", "broadcast_nc11", lambda: x * s, 2 * n * e),
                ("mul", "permuted_broadcast_c11", lambda: xl * g, 2 * n * e),
                ("copy", "permuted_to_contiguous", lambda: xl.contiguous(), 2 * n * e),
                ("add", "permuted_plus_contiguous", lambda: xl + y, 3 * n * e),
            ]
            for op, layout, fn, nbytes in cases:
                t = op_rates.timed(fn)
                rows.append({"op": op, "layout": layout, "dtype": name, "numel": n, "shape": [N, C, HW, HW],
                             "us": round(t * 1e6, 2), "gb_per_s": round(nbytes / t / 1e9, 1)})
            del x, y, xl
        for B, S, H in ((32, 197, 768), (8, 1024, 2048)):
            x = torch.randn(B, S, H, device="cuda", dtype=dt)
            b = torch.randn(H, device="cuda", dtype=dt)
            q = torch.randn(B, S, 12, H // 12, device="cuda", dtype=dt)
            e, n = x.element_size(), x.numel()
            cases = [
                ("add", "broadcast_last_dim", lambda: x + b, 2 * n * e),
                ("copy", "transpose12_to_contiguous", lambda: q.transpose(1, 2).contiguous(), 2 * n * e),
                ("copy", "contiguous_clone", lambda: x.clone(), 2 * n * e),
            ]
            for op, layout, fn, nbytes in cases:
                t = op_rates.timed(fn)
                rows.append({"op": op, "layout": layout, "dtype": name, "numel": n, "shape": [B, S, H],
                             "us": round(t * 1e6, 2), "gb_per_s": round(nbytes / t / 1e9, 1)})
            del x, q
    for r in rows:
        print("[layout] %-5s %-28s %-4s %10d %9.1f us %7.1f GB/s" % (r["op"], r["layout"], r["dtype"], r["numel"],
                                                                   r["us"], r["gb_per_s"]), flush=True)
    json.dump({"schema": "memplan-elementwise-layout/1", "gpu": torch.cuda.get_device_name(0),
               "torch": torch.__version__, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": rows},
              open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
