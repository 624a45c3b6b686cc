#!/usr/bin/env python3
"""Merges timing runs from another device call into data/validation/h200-timing.jsonl (issue 17 part 3).

Host-bound steps move by up to 1.9x between device calls (data/validation/NOTES-time.md, fourth round), so a case
timed in several calls keeps every call's value in `observed.runs_<key>` (step_time_ms, prefill_ms,
decode_ms_per_token) and its `measured` value is their mean; each later call's raw record goes to
`observed.more_runs` with its environment file. Rows of the call whose id is not in the file are appended
(`--append`, e.g. a held-out set measured after its predictions were committed: `--predicted-at` names them).

    python3 calibrate/timing_merge.py BASE.jsonl CALL.jsonl --env ENV.json [--append] [--predicted-at TEXT]
        [--also CALL2.jsonl --also-env ENV2.json]  > OUT.jsonl

With --also, an appended row is the mean of its two calls (the first call's record is the row, the second's goes
to more_runs). stdlib only.
"""
import argparse
import json
import sys

KEYS = ("step_time_ms", "prefill_ms", "decode_ms_per_token")


def add_run(row, rec, env):
    obs = row.setdefault("observed", {})
    m = row["measured"]
    for k in KEYS:
        if k not in m or k not in rec["measured"]:
            continue
        runs = obs.setdefault("runs_" + k, [m[k]])
        runs.append(rec["measured"][k])
        m[k] = round(sum(runs) / len(runs), 4)
    obs.setdefault("more_runs", []).append({"environment": env, "observed": rec.get("observed", {}),
                                            "measured": rec["measured"]})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("call")
    ap.add_argument("--env", required=True)
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--predicted-at", default="")
    ap.add_argument("--also", default="")
    ap.add_argument("--also-env", default="")
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.base) if l.strip()]
    by_id = {r["id"]: r for r in rows}
    also = {}
    if a.also:
        also = {json.loads(l)["id"]: json.loads(l) for l in open(a.also) if l.strip()}
    for l in open(a.call):
        if not l.strip():
            continue
        rec = json.loads(l)
        if "error" in rec or "measured" not in rec:
            sys.exit("timing_merge: %s has no measurement" % rec.get("id"))
        if rec["id"] in by_id:
            add_run(by_id[rec["id"]], rec, a.env)
        elif a.append:
            rec.setdefault("observed", {})["environment"] = a.env
            if a.predicted_at:
                rec["observed"]["predicted_at"] = a.predicted_at
            if rec["id"] in also:
                add_run(rec, also[rec["id"]], a.also_env)
            rows.append(rec)
            by_id[rec["id"]] = rec
        else:
            sys.exit("timing_merge: %s is not in %s (use --append)" % (rec["id"], a.base))
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
