#!/usr/bin/env bash
# Family set 18 (held out: predictions committed in data/validation/predictions/families18-holdout.json) and
# step-time set 22 (predictions in timing22-holdout.json), both predicted before this ran: the timing rows one at a
# time first (nothing else on the GPU), then the memory rows recorded. One call, ~8 min.
#   OUT=dir bash calibrate/runs/families18_run.sh SHA22   ($OUT/timing22.tgz, $OUT/families18.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
REPEAT=0 DEADLINE=140 bash "$here/holdout_timing.sh" timing22 cases/timing22-holdout-input.jsonl "${1:?sha256}"
work=$(mktemp -d)
timeout 310 python3 "$here/record_cases_budget.py" "$here/cases/families18-holdout-input.jsonl" "$work/families18" \
  --jobs 8 --budget-gib 125 --timeout 280 > "$OUT/progress.log" 2>&1
tar -C "$work" -czf "$OUT/families18.tgz" families18
tail -30 "$OUT/progress.log"
