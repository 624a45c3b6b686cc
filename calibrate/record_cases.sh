#!/usr/bin/env bash
# Measures every case of a JSONL file with a whole-run allocator recording (record_case_events.py), JOBS cases at a
# time on one GPU (each in its own process: the caching allocator and cudaMalloc placement are per process).
# Usage (GPU machine, repo root): calibrate/record_cases.sh CASES.jsonl OUT_DIR [JOBS]
# Writes OUT_DIR/<id>.json.gz (events + the measured case), OUT_DIR/measured.jsonl, OUT_DIR/env.json, OUT_DIR/log.
set -u
cases=${1:?usage: record_cases.sh CASES.jsonl OUT_DIR [JOBS]}
out=${2:?usage: record_cases.sh CASES.jsonl OUT_DIR [JOBS]}
jobs=${3:-4}
mkdir -p "$out"
here=$(dirname "$0")
python3 "$here/harness.py" --env "$out/env.json" >>"$out/log" 2>&1
python3 -c 'import json,sys; [print(json.loads(l)["id"]) for l in open(sys.argv[1]) if l.strip()]' "$cases" |
  xargs -P "$jobs" -I{} sh -c "timeout ${CASE_TIMEOUT:-240} python3 '$here/record_case_events.py' '$cases' '{}' '$out/{}.json.gz' >>'$out/log' 2>&1 || echo 'FAILED {}' >>'$out/log'"
python3 - "$cases" "$out" <<'PY' >>"$out/log" 2>&1
import gzip, json, os, sys
cases, out = sys.argv[1:3]
with open(os.path.join(out, "measured.jsonl"), "w") as f:
    for line in open(cases):
        if not line.strip():
            continue
        cid = json.loads(line)["id"]
        p = os.path.join(out, cid + ".json.gz")
        if os.path.exists(p):
            f.write(json.dumps(json.load(gzip.open(p, "rt"))["case"]) + "\n")
PY
grep -E "wrote|FAILED|Error" "$out/log" | tail -40
