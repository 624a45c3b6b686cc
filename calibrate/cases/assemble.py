#!/usr/bin/env python3
"""Joins harness outputs into data/validation/h200-corpus.jsonl: measured cases only (errors are reported, not
written), sorted by id, every 5th case (index 4, 9, ... of the id sort) marked "holdout": true.

    python3 calibrate/cases/assemble.py OUT.jsonl MEASURED1.jsonl [MEASURED2.jsonl ...]

A later file's result for an id replaces an earlier one (re-runs).
"""
import json
import sys


def main(dst, srcs):
    by_id = {}
    for s in srcs:
        for line in open(s):
            if line.strip():
                c = json.loads(line)
                by_id[c["id"]] = c
    ok = {i: c for i, c in by_id.items() if "measured" in c and "error" not in c}
    bad = sorted(set(by_id) - set(ok))
    rows = []
    for n, cid in enumerate(sorted(ok)):
        c = dict(ok[cid])
        c.pop("holdout", None)
        if n % 5 == 4:
            c["holdout"] = True
        rows.append(c)
    with open(dst, "w") as f:
        for c in rows:
            f.write(json.dumps(c) + "\n")
    print("%d cases (%d holdout) -> %s; %d errored: %s" % (len(rows), sum(1 for c in rows if c.get("holdout")), dst,
                                                            len(bad), bad))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
