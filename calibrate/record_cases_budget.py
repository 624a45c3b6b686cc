#!/usr/bin/env python3
"""Like record_cases.sh, with a memory budget: runs record_case_events.py for every case of a JSONL file, at most
JOBS at a time and never more cases at once than their scheduling estimates (`_est_gib`, else 20 GiB) fit into
BUDGET GiB, biggest first. Usage (GPU machine, repo root):
    python3 calibrate/record_cases_budget.py CASES.jsonl OUT_DIR [--jobs 4] [--budget-gib 120]
Writes OUT_DIR/<id>.json.gz, OUT_DIR/measured.jsonl, OUT_DIR/env.json, OUT_DIR/log."""
import argparse
import gzip
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("out")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--budget-gib", type=float, default=120.0)
    ap.add_argument("--timeout", type=float, default=300.0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    log = open(os.path.join(a.out, "log"), "a")
    subprocess.run([sys.executable, os.path.join(HERE, "harness.py"), "--env", os.path.join(a.out, "env.json")],
                   stdout=log, stderr=log)
    cases = [json.loads(l) for l in open(a.cases) if l.strip()]
    est = {c["id"]: float(c.get("_est_gib", 20.0)) for c in cases}
    pending = sorted((c["id"] for c in cases), key=lambda i: -est[i])
    running = {}  # id -> (Popen, t0)
    t_start = time.time()
    while pending or running:
        used = sum(est[i] for i in running)
        for i in list(pending):
            if len(running) >= a.jobs:
                break
            if not running or used + est[i] <= a.budget_gib:
                p = subprocess.Popen([sys.executable, os.path.join(HERE, "record_case_events.py"), a.cases, i,
                                      os.path.join(a.out, i + ".json.gz")], stdout=log, stderr=log)
                running[i] = (p, time.time())
                pending.remove(i)
                used += est[i]
        time.sleep(0.5)
        for i, (p, t0) in list(running.items()):
            if p.poll() is None and time.time() - t0 > a.timeout:
                p.kill()
            if p.poll() is not None:
                del running[i]
                ok = os.path.exists(os.path.join(a.out, i + ".json.gz"))
                print("%7.1fs %s %s" % (time.time() - t_start, "ok    " if ok else "FAILED", i), flush=True)
    with open(os.path.join(a.out, "measured.jsonl"), "w") as f:
        for c in cases:
            p = os.path.join(a.out, c["id"] + ".json.gz")
            if os.path.exists(p):
                f.write(json.dumps(json.load(gzip.open(p, "rt"))["case"]) + "\n")


if __name__ == "__main__":
    main()
