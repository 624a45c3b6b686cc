#!/usr/bin/env python3
"""Host microseconds of an op issued bare (a torch call inside one module's forward, as most of a Hugging Face
layer's elementwise ops are: `x * torch.rsqrt(v + eps)`, the gated delta rule's chunk loop) against the same op
wrapped in its own nn.Module (what calibrate/host_overhead.py's chains measure), forward and forward + backward,
fp32, tiny tensors (the GPU's work negligible: the host sets the pace).

Why: a profiled Qwen3.5 step (data/calibration/raw/h200-step-profiles-21.json.gz) with and without gradient
checkpointing differed by 43 ms of wall and 33 ms of kernels, where the model priced the recompute's host side at
161 ms: its thousands of bare ops costed at the module chains' per-op host seconds.

How: chains of L ops (L = 16 and 48), median of 15 synchronised runs after warm-up, the slope per op; kinds: add
(y + y), mul by a scalar, a view pair, and the Add module chain for comparison; under grad (training) and
inference_mode.
Usage (GPU machine): python3 calibrate/host_bare.py OUT.json"""
import json
import statistics
import sys
import time


def main():
    import torch
    nn = torch.nn

    class Bare(nn.Module):
        def __init__(self, kind, n):
            super().__init__()
            self.kind, self.n = kind, n

        def forward(self, x):
            y = x
            for _ in range(self.n):
                if self.kind == "add":
                    y = y + y
                elif self.kind == "mul":
                    y = y * 0.5
                else:
                    y = y.view(y.shape[0], -1).view(x.shape)
            return y

    class Add(nn.Module):
        def forward(self, x):
            return x + x

    def chain(kind, n):
        if kind == "module_add":
            return nn.Sequential(*[Add() for _ in range(n)])
        return Bare(kind, n)

    x0 = torch.randn(8, 64, device="cuda")
    out = {"torch": torch.__version__, "rows": []}
    for mode in ("grad", "infer"):
        for kind in ("add", "mul", "view", "module_add"):
            per = {}
            for n in (16, 48):
                m = chain(kind, n).cuda()
                times_f, times_fb = [], []
                for rep in range(20):
                    x = x0.clone().requires_grad_(mode == "grad")
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    if mode == "grad":
                        y = m(x)
                        torch.cuda.synchronize()
                        t1 = time.perf_counter()
                        y.sum().backward()
                    else:
                        with torch.inference_mode():
                            y = m(x)
                        torch.cuda.synchronize()
                        t1 = time.perf_counter()
                    torch.cuda.synchronize()
                    t2 = time.perf_counter()
                    if rep >= 5:
                        times_f.append(t1 - t0)
                        times_fb.append(t2 - t0)
                per[n] = (statistics.median(times_f), statistics.median(times_fb))
            f = (per[48][0] - per[16][0]) / 32 * 1e6
            fb = (per[48][1] - per[16][1]) / 32 * 1e6
            out["rows"].append({"mode": mode, "kind": kind, "fwd_us": round(f, 2), "bwd_us": round(fb - f, 2)})
            print(mode, kind, "fwd %.2f us, bwd %.2f us per op" % (f, fb - f), flush=True)
    with open(sys.argv[1], "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
