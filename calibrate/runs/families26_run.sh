#!/usr/bin/env bash
# Nineteenth session's third call. 1) Family set 25, held out (cases/families25-input.jsonl, predicted at 74e87fa in
# predictions/families25-holdout.json before this call), through harness.py, beside the whole-run recording of the
# Falcon-H1 fp32 training row whose reserved read +4.0 % blind (cases/families25-record2-input.jsonl).
# 2) Then alone on the GPU: the eight rows of held-out step-time set 25 not yet timed, fastest first
# (cases/timing25-left2-input.jsonl: lines copied unchanged; predictions/timing25-holdout.json).
#   OUT=dir bash calibrate/runs/families26_run.sh SHA_FAMILIES25 SHA_TIMING25_LEFT2
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R/rec"
(cd "$here"
 got=$(sha256sum cases/families25-input.jsonl | cut -d' ' -f1)
 if [ "$got" = "$1" ]; then echo "$got match"; else echo "$got MISMATCH (expected $1)"; fi | tee "$R/cases.sha256"
 timeout 150 python3 record_cases_budget.py cases/families25-record2-input.jsonl "$R/rec" --jobs 1 --budget-gib 22 \
   --timeout 140 > "$R/rec-progress.log" 2>&1 &
 timeout ${TF:-200} python3 harness.py cases/families25-input.jsonl --out "$R/f25.jsonl" --env "$R/env-f25.json" \
   --jobs 8 --mem-budget-gib 104 --timeout $(( ${TF:-200} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" > "$R/f25.log"; grep -E "summary| ERROR | OOM " "$R/f25.log" | cut -c1-160 | tail -12
 wait
 tail -3 "$R/rec-progress.log" | cut -c1-160
)
tar czf "$OUT/families26.tgz" -C "$R" .
REPEAT=0 DEADLINE=${DT:-200} bash "$here/holdout_timing.sh" timing25b cases/timing25-left2-input.jsonl "$2" 2>&1 | tail -4
