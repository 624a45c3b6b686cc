#!/usr/bin/env bash
# Nineteenth session's second call, one case at a time, nothing else on the GPU:
# 1) held-out step-time set 25's twelve rows the eighteenth session's final call did not reach
#    (cases/timing25-left-input.jsonl: lines copied unchanged from timing25-holdout-input.jsonl, predicted in
#    predictions/timing25-holdout.json before any was measured), one pass;
# 2) fourteen host-bound held-out rows again (cases/host25-input.jsonl: the largest host-bound misses of the
#    corpus), each with the process's host probe (observed.host_probe_us), to test whether a process's probe
#    explains its host-bound step (one pass here; a later call times them again).
#   OUT=dir bash calibrate/runs/host25_run.sh SHA_TIMING25_LEFT
set -u
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")/.." && pwd)
REPEAT=0 DEADLINE=${DT:-230} bash "$here/holdout_timing.sh" timing25 cases/timing25-left-input.jsonl "$1" 2>&1 | tail -4
(cd "$here"
 timeout $(( ${DH:-200} + 60 )) python3 timing_corpus.py cases/host25-input.jsonl --out "$OUT/host25-a.jsonl" --quiet \
   --warmup 2 --steps 4 --timeout 60 --deadline-s ${DH:-200} > "$OUT/host25-a.log" 2>&1
 tail -3 "$OUT/host25-a.log" | cut -c1-150)
ls -la "$OUT"
