#!/usr/bin/env python3
"""Runs reserved_variants.py for (case id, variant) pairs, a few processes at a time under a memory budget (each
case's `_est_gib`). Usage: python3 calibrate/run_variants.py CASES.jsonl OUT.jsonl ID:VARIANT[,VARIANT...] ..."""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    cases_path, out_path = sys.argv[1:3]
    est = {json.loads(l)["id"]: float(json.loads(l).get("_est_gib", 20)) for l in open(cases_path) if l.strip()}
    jobs = []
    for a in sys.argv[3:]:
        cid, vs = a.split(":")
        jobs += [(cid, v) for v in vs.split(",")]
    jobs.sort(key=lambda j: -est[j[0]])
    running, budget, t0 = [], 125.0, time.time()
    out = open(out_path, "w")
    while jobs or running:
        used = sum(est[c] for c, _, _ in running)
        for j in list(jobs):
            if len(running) < 4 and (not running or used + est[j[0]] <= budget):
                v = j[1].rstrip("0123456789") if j[1].startswith("base") else j[1]
                p = subprocess.Popen([sys.executable, os.path.join(HERE, "reserved_variants.py"), cases_path, j[0], v],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                running.append((j[0], j[1], p))
                jobs.remove(j)
                used += est[j[0]]
        time.sleep(0.5)
        for r in list(running):
            if r[2].poll() is not None:
                running.remove(r)
                so, se = r[2].communicate()
                line = so.strip().splitlines()[-1] if so.strip() else json.dumps(
                    {"id": r[0], "variant": r[1], "error": se[-600:]})
                out.write(line + "\n")
                out.flush()
                print("%6.1fs %s" % (time.time() - t0, line), flush=True)


if __name__ == "__main__":
    main()
