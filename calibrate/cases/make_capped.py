#!/usr/bin/env python3
"""Derives memory-capped cases from measured uncapped cases (harness output) so the caps sit near the boundary.

    python3 calibrate/cases/make_capped.py MEASURED.jsonl OUT.jsonl

For each base case: `capfit` = 1.03 x peak_reserved (expected to fit), `capmid` = midway between peak_allocated
and peak_reserved (the allocator must free cached blocks / fragmentation decides), `capoom` = 0.97 x peak_allocated
(expected OOM).  Caps are GiB rounded to 0.01 (up for capfit, down otherwise).  The capped cases are measured
afterwards like any other case; `measured.oom` is the truth, not these expectations.
"""
import json
import math
import sys

BASES = {  # base id -> variants
    "gpt2m-ampbf16-adamw-b4s1024": ("fit", "mid", "oom"),
    "l1b-bf16-adamw-b2s1024": ("fit", "mid", "oom"),
    "q05-ampbf16-adamw-b4s1024": ("fit", "mid", "oom"),
    "resnet101-ampbf16-sgdmom-b64": ("fit", "mid", "oom"),
    "vitb16-ampbf16-adamw-b64": ("fit", "oom"),
    "mix4x8-ampbf16-adamw-b4s1024": ("fit", "oom"),
    "bertl-ampbf16-adamw-b16s512": ("mid", "oom"),
    "l1b-infer-bf16-b8s1024-g32": ("fit", "oom"),
}


def main(src, dst):
    meas = {}
    for line in open(src):
        if line.strip():
            c = json.loads(line)
            meas[c["id"]] = c
    out = []
    for bid, variants in BASES.items():
        c = meas.get(bid)
        if not c or "measured" not in c or c["measured"].get("oom"):
            print("skip %s (not measured)" % bid, file=sys.stderr)
            continue
        m = c["measured"]
        pa, pr = m["peak_allocated_mib"] / 1024.0, m["peak_reserved_mib"] / 1024.0
        for v in variants:
            if v == "fit":
                cap = math.ceil(pr * 1.03 * 100) / 100
            elif v == "mid":
                cap = math.floor((pa + pr) / 2 * 100) / 100
            else:
                cap = math.floor(pa * 0.97 * 100) / 100
            n = {k: val for k, val in c.items() if k not in ("measured", "observed", "holdout")}
            n["id"] = "%s-cap%s-%.2f" % (bid, v, cap)
            n["memory_cap_gib"] = cap
            out.append(n)
    with open(dst, "w") as f:
        for n in out:
            f.write(json.dumps(n) + "\n")
    print("%d capped cases -> %s" % (len(out), dst))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
