#!/usr/bin/env bash
# Eighteenth session's final call. Memory, through harness.py (8 at once in 128 GiB, biggest first, fork launcher, 2
# CPU threads each; no recordings), each result kept as it finishes (the .partial files):
#   1. cases/families24-input.jsonl: family set 24, held out (the helpers' holdout() rows) and the Qwen-VL rows served
#      with images (families23/vlminf.py: none measured before), all predicted at the merge commit before this call
#      (data/validation/predictions/families24-holdout.json; vlminf's also at the commit that first served images);
#   2. cases/families23-left-input.jsonl: the family set 23 tuning rows the first call did not reach, predicted at the
#      same commit (blind to their builders too);
# then the held-out step-time set 25, one case at a time, one pass, as the deadline allows
# (predictions/timing25-holdout.json).
#   OUT=dir bash calibrate/runs/families24_run.sh SHA_FAMILIES24 SHA_TIMING25
set -u
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R"
(cd "$here"
 got=$(sha256sum cases/families24-input.jsonl | cut -d' ' -f1)
 if [ "$got" = "$1" ]; then echo "$got match"; else echo "$got MISMATCH (expected $1)"; fi | tee "$R/cases.sha256"
 OMP_NUM_THREADS=2 timeout ${T24:-270} python3 harness.py cases/families24-input.jsonl --out "$R/f24.jsonl" \
   --env "$R/env-f24.json" --jobs 8 --mem-budget-gib 128 --timeout $(( ${T24:-270} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" > "$R/f24.log"; grep -E "summary| ERROR | OOM " "$R/f24.log" | cut -c1-160 | tail -30
 OMP_NUM_THREADS=2 timeout ${T23:-175} python3 harness.py cases/families23-left-input.jsonl --out "$R/f23left.jsonl" \
   --jobs 8 --mem-budget-gib 128 --timeout $(( ${T23:-175} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" > "$R/f23left.log"; grep -E "summary| ERROR | OOM " "$R/f23left.log" | cut -c1-160 | tail -24
)
tar czf "$OUT/families24.tgz" -C "$R" .
REPEAT=0 DEADLINE=${DT:-40} bash "$here/holdout_timing.sh" timing25 cases/timing25-holdout-input.jsonl "$2" 2>&1 | tail -6
