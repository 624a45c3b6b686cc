#!/usr/bin/env bash
# Measures every distributed case of a JSONL file with a whole-run allocator recording (record_dist_events.py),
# JOBS cases at a time on one GPU, each in its own fresh interpreter (one fake process group per process).
# Usage (GPU machine, repo root): calibrate/record_dist_cases.sh CASES.jsonl OUT_DIR [JOBS] [FRAMES_REGEX]
# Cases whose id matches FRAMES_REGEX are recorded with Python frames (--frames). (Every line xargs -L 1 reads ends
# in a word: a line ending in a blank would be joined to the next one.)
# Writes OUT_DIR/<id>.json.gz (events + the measured case), OUT_DIR/measured.jsonl, OUT_DIR/env.json, OUT_DIR/log.
set -u
cases=${1:?usage: record_dist_cases.sh CASES.jsonl OUT_DIR [JOBS] [FRAMES_REGEX]}
out=${2:?usage: record_dist_cases.sh CASES.jsonl OUT_DIR [JOBS] [FRAMES_REGEX]}
jobs=${3:-6}
frames=${4:-^$}
mkdir -p "$out"
here=$(dirname "$0")
export PYTHONUNBUFFERED=1 MEMPLAN_DIST_JOBS=$jobs
python3 "$here/dist_harness.py" --env "$out/env.json" >>"$out/log" 2>&1 &
envpid=$!
python3 - "$cases" "$frames" <<'PY' |
import json, re, sys
pat = re.compile(sys.argv[2])
for l in open(sys.argv[1]):
    if l.strip():
        cid = json.loads(l)["id"]
        print(cid, "--frames" if pat.search(cid) else "--no-frames")
PY
  xargs -P "$jobs" -L 1 sh -c "timeout ${CASE_TIMEOUT:-240} python3 '$here/record_dist_events.py' '$cases' \"\$0\" '$out/'\"\$0\"'.json.gz' \$1 >>'$out/log' 2>&1 || echo \"FAILED \$0\" >>'$out/log'"
wait $envpid
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
grep -E "wrote|FAILED|Error|error" "$out/log" | cut -c1-300 | tail -60
