#!/usr/bin/env python3
"""The first step-time set timed on an H100 (thirtieth session): rows of the H200 timing corpus run again on the lent
H100 SXM, predicted by the engine at the H100's measured kernel rates (data/calibration/h100/) before any is timed.

The rows are chosen by a rule fixed before measuring, not by how well they are predicted: per (model type or
torchvision name, mode) group of data/validation/h200-timing.jsonl, the row whose id has the smallest sha256, among
rows whose measured run reserved under 70000 MiB (the H100 has 80 GB) and whose H200 build + run took at most 20 s
(a call is 10 minutes); the file is in sha256 order too, so a deadline cuts a random subset. Each row's id is the
H200 row's prefixed "h100-" (its H200 measurement is found by that id), and it gets "gpu": "h100-sxm-80gb".
    python3 calibrate/cases/make_h100_timing.py > calibrate/cases/h100-timing1-input.jsonl
"""
import hashlib
import json
import sys

ROWS = "data/validation/h200-timing.jsonl"


def main():
    groups = {}
    for line in open(ROWS):
        r = json.loads(line)
        obs = r.get("observed", {})
        if obs.get("run_max_reserved_mib", 0) > 70000 or obs.get("wall_s", 0) > 20 or obs.get("build_s", 0) > 10:
            continue
        m = r["model"]
        key = (m.get("model_type") or m.get("name"), r["mode"])
        h = hashlib.sha256(r["id"].encode()).hexdigest()
        if key not in groups or h < groups[key][0]:
            groups[key] = (h, r)
    out = []
    for h, r in sorted(groups.values(), key=lambda x: x[0]):
        case = {k: v for k, v in r.items() if k not in ("measured", "observed", "predicted", "holdout", "tuned")}
        case["id"] = "h100-" + r["id"]
        case["gpu"] = "h100-sxm-80gb"
        out.append(case)
    for c in out:
        sys.stdout.write(json.dumps(c) + "\n")
    print("%d cases" % len(out), file=sys.stderr)


if __name__ == "__main__":
    main()
