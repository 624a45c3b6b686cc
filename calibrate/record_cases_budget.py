#!/usr/bin/env python3
"""Like record_cases.sh, with a memory budget: runs record_case_events.py for every case of a JSONL file, at most
JOBS at a time and never more cases at once than their scheduling estimates (`_est_gib`, else 20 GiB) fit into
BUDGET GiB, biggest first. Usage (GPU machine, repo root):
    python3 calibrate/record_cases_budget.py CASES.jsonl OUT_DIR [--jobs 4] [--budget-gib 120]
Writes OUT_DIR/<id>.json.gz, OUT_DIR/measured.jsonl (rewritten as each case ends, so a run cut short keeps what it
measured), OUT_DIR/env.json, OUT_DIR/log."""
import argparse
import gzip
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_budgeted(tasks, jobs, budget_gib, timeout_s, on_done):
    """Runs subprocesses under a memory budget: `tasks` are (key, est_gib, argv, popen_kwargs); at most `jobs` at
    once, biggest estimate first, never more at once than fit `budget_gib` (one always runs); a task past
    `timeout_s` is killed. on_done(key, returncode) is called as each ends. Also used by run_variants.py."""
    pending = sorted(tasks, key=lambda t: -t[1])
    running = []  # (task, Popen, start time)
    while pending or running:
        used = sum(t[1] for t, _, _ in running)
        for t in list(pending):
            if len(running) >= jobs:
                break
            if not running or used + t[1] <= budget_gib:
                running.append((t, subprocess.Popen(t[2], **t[3]), time.time()))
                pending.remove(t)
                used += t[1]
        time.sleep(0.5)
        for r in list(running):
            t, p, t0 = r
            if p.poll() is None and time.time() - t0 > timeout_s:
                p.kill()
                p.wait()
            if p.poll() is not None:
                running.remove(r)
                on_done(t[0], p.returncode)


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
    t_start = time.time()

    def recording(cid):
        return os.path.join(a.out, cid + ".json.gz")

    finished = set()

    def write_measured():  # only finished cases: a running case's recording may be half written
        with open(os.path.join(a.out, "measured.jsonl"), "w") as f:
            for c in cases:
                if c["id"] in finished and os.path.exists(recording(c["id"])):
                    f.write(json.dumps(json.load(gzip.open(recording(c["id"]), "rt"))["case"]) + "\n")

    def done(cid, _returncode):
        finished.add(cid)
        ok = os.path.exists(recording(cid))
        print("%7.1fs %s %s" % (time.time() - t_start, "ok    " if ok else "FAILED", cid), flush=True)
        write_measured()

    tasks = [(c["id"], float(c.get("_est_gib", 20.0)),
              [sys.executable, os.path.join(HERE, "record_case_events.py"), a.cases, c["id"], recording(c["id"])],
              {"stdout": log, "stderr": log}) for c in cases]
    run_budgeted(tasks, a.jobs, a.budget_gib, a.timeout, done)
    write_measured()


if __name__ == "__main__":
    main()
