#!/usr/bin/env python3
"""Host (CPU) microseconds that non-reentrant activation checkpointing adds per checkpointed block (issue 17
part 3, ninth session).

Why: GPT-2 XL bf16 b2 s1024 takes 296 ms of host time a step with checkpointing and 133 ms without
(calibrate/host_issue.py, 2026-12-02, data/calibration/raw/h200-host-issue.json): 163 ms more for 48 layers,
where re-running the forward accounts for about a third. torch.utils.checkpoint (use_reentrant=False, as
transformers enables it) calls Python for every tensor autograd saves: a pack hook in the forward, a pack hook
again in the recompute, an unpack hook in the backward, plus a metadata check per block. The step-time model
re-issued the forward's ops and nothing else.

How: chains of L identical blocks on a tiny input (the GPU's work is negligible: the step is host-bound),
L = 16 and 48, the cost of one block the slope between the two lengths. Four block kinds separate a cost per
saved tensor from a cost per op: k bias-free Linear(64, 64) (each op saves 2 tensors: its input and the weight)
for k = 2, 8, and k sin() ops (each saves 1: its input) for k = 4, 16. Each chain is timed plain and with every
block wrapped in torch.utils.checkpoint.checkpoint(use_reentrant=False) (preserve_rng_state on, the default),
forward alone and forward + backward (loss = y.sum()), synchronised, median of 15 after 5 warm-up runs; fp32 and
autocast bf16.

Usage (GPU machine): python3 calibrate/ckpt_host.py OUT.json
       (anywhere)     python3 calibrate/ckpt_host.py --table IN.json[,IN2.json...] OUT.tsv
The table (data/calibration/h200-ckpt-host.tsv): per block kind, precision and run, ops and saved tensors per
block, microseconds per block plain and checkpointed (forward; forward + backward). One run's slopes move by
up to 2x between device calls (two calls, 2026-12-02: linear2's extra 394 and 847 us), so the table pools runs.
"""
import json
import sys
import time

import table_io
from host_overhead import chain_slope_us, fwd_bwd_medians

BLOCKS = {  # name: (op, ops per block, saved tensors per op)
    "linear2": ("linear", 2, 2),
    "linear8": ("linear", 8, 2),
    "sin4": ("sin", 4, 1),
    "sin16": ("sin", 16, 1),
}


def make_block(torch, op, k):
    nn = torch.nn

    class Sin(nn.Module):
        def forward(self, x):
            return x.sin()

    if op == "linear":
        return nn.Sequential(*[nn.Linear(64, 64, bias=False) for _ in range(k)])
    return nn.Sequential(*[Sin() for _ in range(k)])


def chain_times(torch, op, k, L, ckpt, ac):
    from torch.utils.checkpoint import checkpoint
    blocks = torch.nn.ModuleList([make_block(torch, op, k) for _ in range(L)]).cuda().train()
    x = torch.randn(2, 8, 64, device="cuda", requires_grad=True)

    def run():
        h = x
        for b in blocks:
            h = checkpoint(b, h, use_reentrant=False) if ckpt else b(h)
        return h

    def fwd():
        with ac():
            return run()

    def fwd_bwd():
        with ac():
            y = run()
        y.float().sum().backward()

    out = fwd_bwd_medians(torch, fwd, fwd_bwd)
    blocks.zero_grad(set_to_none=True)
    return out


def write_table(in_paths, out_path):
    """IN: one run's JSON, or several joined by commas (runs in different device calls: their rows are pooled, a
    column naming the run)."""
    runs = []
    for p in in_paths.split(","):
        with open(p) as f:
            runs.append(json.load(f))
    env = dict(runs[0]["environment"])
    env["runs"] = len(runs)
    env["dates"] = "/".join(sorted({r["environment"]["date"] for r in runs}))
    env.pop("date", None)
    lines = table_io.header("memplan-ckpt-host/2: host microseconds per block of a training step, plain and under "
                            "non-reentrant checkpointing (calibrate/ckpt_host.py)", env,
                            "block precision run ops saved plain_fwd_us plain_fwd_bwd_us ckpt_fwd_us ckpt_fwd_bwd_us")
    for i, run in enumerate(runs, 1):
        for bname in sorted(run["us_per_block"]):
            op, k, per = BLOCKS[bname]
            for prec, v in sorted(run["us_per_block"][bname].items()):
                lines.append(f"{bname} {prec} {i} {k} {k * per} {v['plain']['fwd']:.2f} {v['plain']['fwd_bwd']:.2f} "
                             f"{v['ckpt']['fwd']:.2f} {v['ckpt']['fwd_bwd']:.2f}")
    table_io.write(out_path, lines)


def main():
    if table_io.table_mode(sys.argv, write_table):
        return
    import contextlib
    import torch
    res = {}
    for prec, ac in (("fp32", contextlib.nullcontext),
                     ("amp_bf16", lambda: torch.autocast("cuda", dtype=torch.bfloat16))):
        for bname, (op, k, _) in BLOCKS.items():
            row = {}
            for mode in ("plain", "ckpt"):
                row[mode] = chain_slope_us(lambda L: chain_times(torch, op, k, L, mode == "ckpt", ac))
            res.setdefault(bname, {})[prec] = row
            print(f"[ckpt] {bname:8s} {prec:8s} plain {row['plain']} ckpt {row['ckpt']}", flush=True)
    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d")}
    with open(sys.argv[1], "w") as f:
        json.dump({"format": "memplan-ckpt-host/1", "environment": env, "us_per_block": res}, f, indent=1)


if __name__ == "__main__":
    main()
