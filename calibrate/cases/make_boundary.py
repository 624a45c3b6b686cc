#!/usr/bin/env python3
"""Boundary cases for the fit verdict (issue 4): caps set around memplan's own predictions of peak allocated and
peak reserved, with and without expandable segments, plus the uncapped expandable run of each base case.
Usage: python3 calibrate/cases/make_boundary.py MEMPLAN_BIN > calibrate/cases/boundary.jsonl
The caps are derived from predictions, but the truth recorded for them is what the GPU does."""
import json
import subprocess
import sys

BASES = ["gpt2m-ampbf16-adamw-b4s1024", "l1b-bf16-adamw-b2s1024", "q05-ampbf16-adamw-b4s1024",
         "bertl-ampbf16-adamw-b16s512"]


def predict(binary, case):
    with open("/tmp/boundary_one.jsonl", "w") as f:
        f.write(json.dumps(case) + "\n")
    out = subprocess.run([binary, "validate", "/tmp/boundary_one.jsonl", "--json"], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)["cases"][0]["predicted"]


def main():
    binary = sys.argv[1]
    corpus = {}
    for line in open("data/validation/h200-corpus.jsonl"):
        c = json.loads(line)
        corpus[c["id"]] = c
    for base_id in BASES:
        base = {k: v for k, v in corpus[base_id].items() if k not in ("measured", "holdout", "observed")}
        exp = dict(base, id=base_id + "-expseg", alloc_conf="expandable_segments:True")
        p = predict(binary, base)
        pe = predict(binary, exp)
        print(json.dumps(exp))
        alloc, rsv, rsv_e = p["peak_allocated_mib"], p["peak_reserved_mib"], pe["peak_reserved_mib"]
        for tag, mib, conf in (("lo", alloc * 1.01, None), ("mid", (alloc + rsv) / 2, None), ("hi", rsv * 1.01, None),
                               ("expseg-lo", alloc * 1.01, "expandable_segments:True"),
                               ("expseg-hi", rsv_e * 1.01, "expandable_segments:True")):
            gib = round(mib / 1024.0, 2)
            c = dict(base, id="%s-bnd-%s-%.2f" % (base_id, tag, gib), memory_cap_gib=gib)
            if conf:
                c["alloc_conf"] = conf
            print(json.dumps(c))


if __name__ == "__main__":
    main()
