#!/usr/bin/env bash
# Twenty-third session's first call. (1) The five amp_fp16 rows whose measured peak lacked optimizer state
# (cases/scaler-rerun-input.jsonl: GradScaler skipped their steps, NOTES.md), re-measured by harness.py, which now
# records measured.scaler_skipped_steps. (2) Timing set 30 (cases/timing30-holdout-input.jsonl, predicted in
# predictions/timing30-holdout.json before this call), one case at a time, two passes (holdout_timing.sh).
#   OUT=dir bash calibrate/runs/scaler33_run.sh SHA_TIMING30
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R"
(cd "$here"
 timeout 150 python3 harness.py cases/scaler-rerun-input.jsonl --out "$R/scaler.jsonl" --env "$R/env-scaler.json" \
   --jobs 5 --mem-budget-gib 120 --timeout 140 2>&1 | grep -v "^\[transformers\]" > "$R/scaler.log"
 grep -E "summary| ERROR | OOM " "$R/scaler.log" | cut -c1-160 | tail -8
)
tar czf "$OUT/scaler33.tgz" -C "$R" . && rm -rf "$R"
DEADLINE=${DEADLINE:-210} bash "$here/holdout_timing.sh" timing56 cases/timing30-holdout-input.jsonl "${1:-}"
