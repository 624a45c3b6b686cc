#!/usr/bin/env python3
"""Runs reserved_variants.py for (case id, variant) pairs, a few processes at a time under a memory budget (each
case's `_est_gib`; record_cases_budget.run_budgeted). A variant named base2, base3 ... is `base` again (a repeat).
Usage: python3 calibrate/run_variants.py CASES.jsonl OUT.jsonl ID:VARIANT[,VARIANT...] ..."""
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record_cases_budget import HERE, run_budgeted  # noqa: E402


def main():
    cases_path, out_path = sys.argv[1:3]
    est = {json.loads(l)["id"]: float(json.loads(l).get("_est_gib", 20)) for l in open(cases_path) if l.strip()}
    work = tempfile.mkdtemp(prefix="memplan-variants-")
    tasks, labels = [], {}
    for arg in sys.argv[3:]:
        cid, variants = arg.split(":")
        for v in variants.split(","):
            key = "%s:%s" % (cid, v)
            run_as = "base" if v.startswith("base") else v
            so, se = (open(os.path.join(work, "%d.%s" % (len(tasks), x)), "w+") for x in ("out", "err"))
            labels[key] = (cid, v, so, se)
            tasks.append((key, est[cid], [sys.executable, os.path.join(HERE, "reserved_variants.py"), cases_path,
                                          cid, run_as], {"stdout": so, "stderr": se}))
    out = open(out_path, "w")
    t0 = time.time()

    def done(key, _returncode):
        cid, v, so, se = labels[key]
        so.seek(0)
        se.seek(0)
        lines = so.read().strip().splitlines()
        line = lines[-1] if lines else json.dumps({"id": cid, "variant": v, "error": se.read()[-600:]})
        out.write(line + "\n")
        out.flush()
        print("%6.1fs %s" % (time.time() - t0, line), flush=True)

    run_budgeted(tasks, 4, 125.0, 600.0, done)


if __name__ == "__main__":
    main()
