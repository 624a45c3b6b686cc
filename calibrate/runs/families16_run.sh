#!/usr/bin/env bash
# Family set 16 (held out: predictions committed in data/validation/predictions/families16-holdout.json) and
# step-time set 21 (predictions in timing21-holdout.json), both predicted before this ran: the timing rows one at a
# time first (nothing else on the GPU), then the memory rows recorded. One call, ~6 min.
#   OUT=dir bash calibrate/runs/families16_run.sh SHA21   ($OUT/timing21.tgz, $OUT/families16.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
REPEAT=0 DEADLINE=150 bash "$here/holdout_timing.sh" timing21 cases/timing21-holdout-input.jsonl "${1:?sha256}"
work=$(mktemp -d)
timeout 380 python3 "$here/record_cases_budget.py" "$here/cases/families16-holdout-input.jsonl" "$work/families16" \
  --jobs 8 --budget-gib 125 --timeout 300 > "$OUT/progress.log" 2>&1
tar -C "$work" -czf "$OUT/families16.tgz" families16
tail -30 "$OUT/progress.log"
