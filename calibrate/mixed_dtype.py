#!/usr/bin/env python3
"""Binary elementwise ops whose operands differ in dtype (issue 17 part 3): what they run at.

Why: under autocast the residual stream and GELU's products mix fp32 and bf16 operands (an fp32 + bf16 add makes an
fp32 result); TensorIterator then runs its casting kernels (unrolled_elementwise_kernel, gpu_kernel_impl), not
the vectorized one the contiguous rate was measured on. The amp profiles hold hundreds of them (Qwen3-0.6B amp:
168 unrolled fp32 adds, 10.1 ms in the LoRA Qwen2 step; GPT-2-medium amp: 72 mixed adds in the graph).

    python3 calibrate/mixed_dtype.py OUT.json     (GPU machine, ~20 s)

Rows (op_rates.timed, median of 5): op, operand dtypes, layout, numel of the output, microseconds, GB/s of
(operand reads + output write) bytes, and the same-dtype fp32 op's GB/s in the same run.
"""
import json
import sys
import time

import op_rates


def main():
    import torch
    torch.cuda.init()
    rows = []
    for M, H in ((8192, 4096), (16384, 1024), (2048, 2048)):
        a32 = torch.randn(M, H, device="cuda")
        b32 = torch.randn(M, H, device="cuda")
        a16 = torch.randn(M, H, device="cuda", dtype=torch.bfloat16)
        w16 = torch.randn(H, device="cuda", dtype=torch.bfloat16)
        w32 = torch.randn(H, device="cuda")
        n = M * H
        cases = [
            ("add", "fp32+fp32", "contiguous", lambda: a32 + b32, 12 * n),
            ("add", "fp32+bf16", "contiguous", lambda: a32 + a16, 10 * n),
            ("add", "bf16+fp32", "contiguous", lambda: a16 + a32, 10 * n),
            ("mul", "fp32*bf16", "contiguous", lambda: a32 * a16, 10 * n),
            ("mul", "fp32*fp32[H]", "broadcast", lambda: a32 * w32, 8 * n),
            ("mul", "fp32*bf16[H]", "broadcast", lambda: a32 * w16, 8 * n),
            ("mul", "bf16*fp32[H]", "broadcast", lambda: a16 * w32, 6 * n),
        ]
        for op, dts, layout, fn, nbytes in cases:
            t = op_rates.timed(fn)
            rows.append({"op": op, "dtypes": dts, "layout": layout, "numel": n, "us": round(t * 1e6, 3),
                         "gb_per_s": round(nbytes / t / 1e9, 1)})
            print("[mixed] %-4s %-14s %-10s %9d %9.1f us %7.1f GB/s" % (op, dts, layout, n, t * 1e6, nbytes / t / 1e9),
                  flush=True)
        del a32, b32, a16
    json.dump({"schema": "memplan-mixed-dtype/1", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": rows},
              open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
