#!/usr/bin/env bash
# Twenty-first session's fifth call: odd shapes set 3, held out (cases/odd-shapes3-input.jsonl, predicted in
# predictions/odd-shapes3-holdout.json before this call), through harness.py.
#   OUT=dir bash calibrate/runs/odd3_run.sh SHA_ODD3
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R"
(cd "$here"
 echo "${1:-} cases/odd-shapes3-input.jsonl" | sha256sum -c - || echo "INPUT CHANGED SINCE THE PREDICTIONS"
 timeout ${HOLD_S:-300} python3 harness.py cases/odd-shapes3-input.jsonl --out "$R/odd3.jsonl" \
   --env "$R/env-odd3.json" --jobs 6 --mem-budget-gib 120 --timeout $(( ${HOLD_S:-300} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" > "$R/odd3.log"; grep -E "summary| ERROR | OOM " "$R/odd3.log" | cut -c1-160 | tail -20
)
tar czf "$OUT/odd3.tgz" -C "$R" .
ls -la "$OUT"
