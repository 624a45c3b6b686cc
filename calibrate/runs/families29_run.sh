#!/usr/bin/env bash
# Twenty-first session's second call: family set 27, held out (cases/families27-input.jsonl, predicted in
# predictions/families27-holdout.json before this call), through harness.py.
#   OUT=dir bash calibrate/runs/families29_run.sh SHA_FAMILIES27
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R"
(cd "$here"
 echo "${1:-} cases/families27-input.jsonl" | sha256sum -c - || echo "INPUT CHANGED SINCE THE PREDICTIONS"
 timeout ${HOLD_S:-200} python3 harness.py cases/families27-input.jsonl --out "$R/f27.jsonl" \
   --env "$R/env-f27.json" --jobs 8 --mem-budget-gib 120 --timeout $(( ${HOLD_S:-200} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" > "$R/f27.log"; grep -E "summary| ERROR | OOM " "$R/f27.log" | cut -c1-160 | tail -12
)
tar czf "$OUT/families29.tgz" -C "$R" .
ls -la "$OUT"
