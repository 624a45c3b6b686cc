#!/usr/bin/env bash
# Seventeenth session's final call: family set 22, held out (the helpers' holdout() rows) and the three set-21 tuning
# rows the first call did not measure, all predicted at the merge commit before this call
# (data/validation/predictions/families22-holdout.json); then the eleven rows of the sixteenth session's final call
# that did not run there (predicted at 012ed99: predictions/families20-holdout.json and the set-19 tuning rows), as
# time allows; then the held-out step-time set 24, one case at a time, one pass (predictions/timing24-holdout.json).
#   OUT=dir bash calibrate/runs/families22_run.sh SHA_FAMILIES SHA_TIMING
# Memory rows through harness.py (8 at once in 128 GiB packed by the predicted reserved peaks, fork launcher, 2 CPU
# threads each), no recordings; each result is kept as it finishes (the .partial files).
set -u
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R"
(cd "$here"
 got=$(sha256sum cases/families22-input.jsonl | cut -d' ' -f1)
 if [ "$got" = "$1" ]; then echo "$got match"; else echo "$got MISMATCH (expected $1)"; fi | tee "$R/cases.sha256"
 OMP_NUM_THREADS=2 timeout ${T22:-230} python3 harness.py cases/families22-input.jsonl --out "$R/f22.jsonl" \
   --env "$R/env-f22.json" --jobs 8 --mem-budget-gib 128 --timeout $(( ${T22:-230} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" | tee "$R/f22.log" | cut -c1-150 | tail -40
 OMP_NUM_THREADS=2 timeout ${T20:-90} python3 harness.py cases/families20-left-input.jsonl \
   --out "$R/f20left.jsonl" --jobs 8 --mem-budget-gib 128 --timeout $(( ${T20:-90} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" | tee "$R/f20left.log" | cut -c1-150 | tail -15
)
tar czf "$OUT/families22.tgz" -C "$R" .
REPEAT=0 DEADLINE=${DT:-120} bash "$here/holdout_timing.sh" timing24 cases/timing24-holdout-input.jsonl "$2" 2>&1 | tail -25
# Last, alone on the GPU: host seconds of bare ops against module-wrapped ones (calibrate/host_bare.py).
(cd "$here" && timeout ${TB:-45} python3 host_bare.py "$OUT/host-bare.json" 2>&1 | tail -8)
