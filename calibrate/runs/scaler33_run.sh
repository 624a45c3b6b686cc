#!/usr/bin/env bash
# A call for a session with a device (written in the twenty-third session, which was lent none). (1) The five
# amp_fp16 rows whose measured peak lacked optimizer state (cases/scaler-rerun-input.jsonl: GradScaler skipped
# their steps, NOTES.md "GradScaler-skipped runs"), re-measured by harness.py, which now records
# measured.scaler_skipped_steps. (2) Timing set 30 (cases/timing30-holdout-input.jsonl, predicted in
# predictions/timing30-holdout.json before this call), one case at a time, two passes (holdout_timing.sh). (3) below.
#   OUT=dir bash calibrate/runs/scaler33_run.sh SHA_TIMING30
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=150 bash "$here/holdout_memory.sh" scaler33 cases/scaler-rerun-input.jsonl
DEADLINE=${DEADLINE:-210} bash "$here/holdout_timing.sh" timing56 cases/timing30-holdout-input.jsonl "${1:-}"
# (3) Added in the twenty-fourth session: the host cost of an autocast activation cast, which the step-time model
# prices at one dispatch (NOTES-time.md, twenty-second round): the linear_ln chains beside linear_nobias and
# layer_norm, every precision (host_overhead.py's docstring gives the arithmetic).
(cd "$here" && timeout 300 python3 host_overhead.py "$OUT/host-overhead-run4.json" linear_nobias,layer_norm,linear_ln,linear \
  > "$OUT/host-overhead-run4.log" 2>&1) || echo "host_overhead.py failed or timed out (log in OUT)"
