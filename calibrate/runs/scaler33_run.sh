#!/usr/bin/env bash
# A call for a session with a device (written in the twenty-third session, which was lent none). (1) The five
# amp_fp16 rows whose measured peak lacked optimizer state (cases/scaler-rerun-input.jsonl: GradScaler skipped
# their steps, NOTES.md "GradScaler-skipped runs"), re-measured by harness.py, which now records
# measured.scaler_skipped_steps. (2) Timing set 30 (cases/timing30-holdout-input.jsonl, predicted in
# predictions/timing30-holdout.json before this call), one case at a time, two passes (holdout_timing.sh).
#   OUT=dir bash calibrate/runs/scaler33_run.sh SHA_TIMING30
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=150 bash "$here/holdout_memory.sh" scaler33 cases/scaler-rerun-input.jsonl
DEADLINE=${DEADLINE:-210} bash "$here/holdout_timing.sh" timing56 cases/timing30-holdout-input.jsonl "${1:-}"
