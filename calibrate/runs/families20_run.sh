#!/usr/bin/env bash
# Sixteenth session's final call: family set 20, held out (the helpers' holdout() rows, 18) and the ten tuning rows of
# set 19 the first call did not measure (three mistral4 rows failed there, seven did not start), all predicted at
# the merge commit before this call (data/validation/predictions/families20-holdout.json); then the held-out
# step-time set 23, one case at a time, one pass (data/validation/predictions/timing23-holdout.json).
#   OUT=dir bash calibrate/runs/families20_run.sh SHA_FAMILIES SHA_TIMING
# Memory rows through harness.py (8 at once in 125 GiB packed by the predicted reserved peaks, fork launcher, 2 CPU
# threads each: the CPU-side construction of the big MoE models dominated the first call), no recordings (time);
# the f20 rows first, then the set-19 leftovers with what time remains; each result is kept as it finishes
# (the .partial files).
set -u
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R"
(cd "$here"
 got=$(sha256sum cases/families20-input.jsonl | cut -d' ' -f1)
 if [ "$got" = "$1" ]; then echo "$got match"; else echo "$got MISMATCH (expected $1)"; fi | tee "$R/cases.sha256"
 for part in f20:240 f19:95; do
   p=${part%%:*} t=${part##*:}
   OMP_NUM_THREADS=2 timeout $t python3 harness.py cases/families20-input.jsonl --only "^$p-" --out "$R/$p.jsonl" \
     --env "$R/env-$p.json" --jobs 8 --mem-budget-gib 128 --timeout $((t - 10)) 2>&1 | grep -v "^\[transformers\]" |
     tee "$R/$p.log" | cut -c1-150 | tail -30
 done
)
tar czf "$OUT/families20.tgz" -C "$R" .
REPEAT=0 DEADLINE=110 bash "$here/holdout_timing.sh" timing23 cases/timing23-holdout-input.jsonl "$2" 2>&1 | tail -25
