#!/usr/bin/env bash
# For the next session with a device (written in the twenty-seventh, whose device time ran out in failed starts
# after the first two calls): family set 36 held out (cases/families36-input.jsonl: ESM and DINOv3 at new shapes and
# settings after the set 32 / 35 corrections; predicted in predictions/families36-holdout.json before any device saw
# them), the memory rows; then the steady-state step of the one ESM row the corrections left over 0.1 %
# (f32-esm35-bf16-b16s512, +0.47 %) with frames, for scripts/diff-case-events.sh. About 4 minutes.
#   OUT=dir bash calibrate/runs/families40_run.sh 2d21c83aba23be4b7c94169d65415333ce150029992de66c82d67e943b264f08
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=200 bash "$here/holdout_memory.sh" families40 cases/families36-input.jsonl "${1:-}"
(cd "$here" && timeout 150 python3 record_trace.py cases/families32-input.jsonl f32-esm35-bf16-b16s512 \
  "$OUT/esm35-step.json.gz" > "$OUT/esm35-trace.log" 2>&1) || echo "record_trace failed (esm35-trace.log)"
