#!/usr/bin/env python3
"""Softmax time by row length, aligned and not (issue 17 part 3, eighth session). moe_odd_kernels.py found rows of
2049 (gpt_oss's sink column) 2.1x slower forward and 1.5x (bf16) / 1.24x (fp32) backward than rows of 2048, and no
difference at 50257 vs 50264: this sweep finds the lengths where the misaligned row costs more. Forward and
forward + backward of F.softmax over [rows, L] with rows x L ~ 2^28, bf16 and fp32, L from 65 to 65537.

    python3 calibrate/softmax_rows.py OUT.json          (GPU machine, ~30 s)
"""
import json
import sys
import time

import op_rates


def main():
    import torch
    import torch.nn.functional as F
    torch.cuda.init()
    t0 = time.time()
    rows = []
    for dname, dt in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        for L in (64, 65, 512, 513, 1024, 1025, 1500, 1504, 2048, 2049, 3000, 3001, 3008, 4096, 4097, 6000, 6001,
                  8192, 8193, 16384, 16385, 32768, 32769, 65536, 65537):
            n = max(1, (1 << 28) // L)
            x = torch.randn(n, L, device="cuda", dtype=dt, requires_grad=True)
            go = torch.randn(n, L, device="cuda", dtype=dt)

            def fwd():
                with torch.no_grad():
                    F.softmax(x, dim=-1)

            def fb():
                torch.autograd.grad(F.softmax(x, dim=-1), (x,), go)

            tf = op_rates.timed(fwd, reps=3)
            tfb = op_rates.timed(fb, reps=3)
            rows.append({"dtype": dname, "L": L, "rows": n, "fwd_ms": round(tf * 1e3, 4),
                         "bwd_ms": round((tfb - tf) * 1e3, 4)})
            print("[softmax_rows]", json.dumps(rows[-1]), flush=True)
            del x, go
            torch.cuda.empty_cache()
    json.dump({"schema": "memplan-softmax-rows/1", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "wall_s": round(time.time() - t0, 1),
               "rows": rows}, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
