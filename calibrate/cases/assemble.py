#!/usr/bin/env python3
"""Joins harness outputs into data/validation/h200-corpus.jsonl: measured cases only (errors are reported, not
written), sorted by id, every 5th uncapped case (index 4, 9, ... of their id sort) marked "holdout": true; capped
cases `<base>-cap...` take their base case's flag.

    python3 calibrate/cases/assemble.py OUT.jsonl MEASURED1.jsonl [MEASURED2.jsonl ...]

A later file's result for an id replaces an earlier one (re-runs).  Ids of the public file are left out.
"""
import json
import os
import sys

PUBLIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "validation",
                      "h200-public-cases.jsonl")


def main(dst, srcs):
    by_id = {}
    for s in srcs:
        for line in open(s):
            if line.strip():
                c = json.loads(line)
                by_id[c["id"]] = c
    public = set(json.loads(l)["id"] for l in open(PUBLIC) if l.strip())
    by_id = {i: c for i, c in by_id.items() if i not in public}
    ok = {i: c for i, c in by_id.items() if "measured" in c and "error" not in c}
    bad = sorted(set(by_id) - set(ok))
    # every 5th uncapped case in id order is holdout; a capped case (same run as its base, plus a cap) inherits its
    # base's flag so that no holdout measurement leaks into the tuned set
    def base_of(c):
        return c["id"].split("-cap")[0] if c.get("memory_cap_gib") is not None and "-cap" in c["id"] else None
    uncapped = sorted(i for i, c in ok.items() if base_of(c) is None)
    hold = set(cid for n, cid in enumerate(uncapped) if n % 5 == 4)
    rows = []
    for cid in sorted(ok):
        c = dict(ok[cid])
        c.pop("holdout", None)
        if (base_of(c) or cid) in hold:
            c["holdout"] = True
        rows.append(c)
    with open(dst, "w") as f:
        for c in rows:
            f.write(json.dumps(c) + "\n")
    print("%d cases (%d holdout) -> %s; %d errored: %s" % (len(rows), sum(1 for c in rows if c.get("holdout")), dst,
                                                            len(bad), bad))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
