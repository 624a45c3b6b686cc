#!/usr/bin/env bash
# Twenty-second session's fourth call: family set 29, held out (cases/families29-input.jsonl, predicted in
# predictions/families29-holdout.json before this call): the memory rows through harness.py, then one timing pass
# of the same rows (holdout_timing.sh, REPEAT=0) against the same predictions.
#   OUT=dir bash calibrate/runs/families32_run.sh SHA_FAMILIES29
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R"
(cd "$here"
 echo "${1:-} cases/families29-input.jsonl" | sha256sum -c - || echo "INPUT CHANGED SINCE THE PREDICTIONS"
 timeout 200 python3 harness.py cases/families29-input.jsonl --out "$R/f29.jsonl" --env "$R/env-f29.json" \
   --jobs 6 --mem-budget-gib 120 --timeout 190 2>&1 | grep -v "^\[transformers\]" > "$R/f29.log"
 grep -E "summary| ERROR | OOM " "$R/f29.log" | cut -c1-160 | tail -8
)
tar czf "$OUT/families32.tgz" -C "$R" . && rm -rf "$R"
REPEAT=0 DEADLINE=${DEADLINE:-200} bash "$here/holdout_timing.sh" timing55 cases/families29-input.jsonl "${1:-}"
