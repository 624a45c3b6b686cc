#!/usr/bin/env python3
"""Strided copies by the length of their contiguous inner run, and broadcast operands by which dims they broadcast
(issue 17 part 3).

Why: Swin-T amp b128's profiled step (h200-step-profiles-6.json.gz) spends 15 ms in copy kernels (ATen's
non-vectorized direct_copy, device-to-device memcpys) where the model has 11: its attention heads are 32 wide, its
window partition a 6-D permute, and the model costs every copy of a transposed view at one measured ratio (a
transpose of 64- and 170-element heads). Qwen3-0.6B amp's profile spends 25 ms in fp32 muls against operands
broadcast along the last dim ([B, S, 1]: RMSNorm's rsqrt) or the heads ([B, 1, S, D]: RoPE's cos / sin), measured
only as broadcasts along leading dims.

    python3 calibrate/copy_runs.py OUT.json     (GPU machine, ~40 s)

Rows (op_rates.timed, median of 5): op, dtype, inner run (elements), shape, microseconds, GB/s of read + write.
"""
import json
import sys
import time

import op_rates


def main():
    import torch
    import torch.nn.functional as F
    torch.cuda.init()
    rows = []

    def row(op, dt, run, shape, fn, nbytes):
        t = op_rates.timed(fn)
        rows.append({"op": op, "dtype": dt, "run": run, "shape": list(shape), "us": round(t * 1e6, 3),
                     "gb_per_s": round(nbytes / t / 1e9, 1)})
        print("[copy] %-22s %-4s run %5d %-28s %9.1f us %7.1f GB/s" % (op, dt, run, shape, t * 1e6, nbytes / t / 1e9),
              flush=True)

    total = 1 << 25
    for name, dt in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        e = torch.tensor([], dtype=dt).element_size()
        x = torch.randn(total, device="cuda", dtype=dt)
        row("clone", name, total, [total], lambda: x.clone(), 2 * total * e)
        row("pad_zero", name, total, [total], lambda: F.pad(x.view(1, -1, 1), (0, 0, 0, 0)), 2 * total * e)
        del x
        # x[A, B, r].transpose(0, 1).contiguous(): runs of r elements
        for r in (8, 16, 32, 64, 128, 256, 512, 1024, 4096):
            a = 256
            b = total // (a * r)
            x = torch.randn(a, b, r, device="cuda", dtype=dt)
            row("transpose_copy", name, r, [a, b, r], lambda: x.transpose(0, 1).contiguous(), 2 * total * e)
            del x
        # Swin's window partition of a [B, pH, pW, C] map: view [B, pH/ws, ws, pW/ws, ws, C], permute (0,1,3,2,4,5)
        for B, P, C in ((128, 56, 96), (128, 28, 192), (128, 14, 384)):
            ws = 7
            x = torch.randn(B, P // ws, ws, P // ws, ws, C, device="cuda", dtype=dt)
            n = x.numel()
            row("window_partition", name, ws * C, [B, P, P, C], lambda: x.permute(0, 1, 3, 2, 4, 5).contiguous(),
                2 * n * e)
            del x
        # broadcasts: the operand constant along the last dim, along the heads, along leading dims
        Bq, S, H, D = 8, 1024, 16, 128
        x = torch.randn(Bq, S, H * D, device="cuda", dtype=dt)
        n = x.numel()
        inner = torch.randn(Bq, S, 1, device="cuda", dtype=dt)
        lastw = torch.randn(H * D, device="cuda", dtype=dt)
        row("mul_bcast_inner", name, 1, [Bq, S, H * D], lambda: x * inner, 2 * n * e)
        row("mul_bcast_lastdim_w", name, H * D, [Bq, S, H * D], lambda: x * lastw, 2 * n * e)
        q = torch.randn(Bq, H, S, D, device="cuda", dtype=dt)
        cos = torch.randn(Bq, 1, S, D, device="cuda", dtype=dt)
        row("mul_bcast_heads", name, S * D, [Bq, H, S, D], lambda: q * cos, 2 * n * e)
        qt = torch.randn(Bq, S, H, D, device="cuda", dtype=dt).transpose(1, 2)  # HF's q: [B, S, H, D] as [B, H, S, D]
        row("mul_bcast_heads_strided", name, D, [Bq, H, S, D], lambda: qt * cos, 2 * n * e)
        del x, q, qt
    json.dump({"schema": "memplan-copy-runs/1", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "rows": rows},
              open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
