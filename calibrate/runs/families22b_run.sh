#!/usr/bin/env bash
# Seventeenth session, a third call: what the final call left. Memory: f21-dbrx-infer (did not finish in either call)
# and the eleven sixteenth-session leftovers (cases/families22b-input.jsonl; predicted at the merge commit and at
# 012ed99 respectively); then timing set 24's two speech rows (they failed in the final call: timing_corpus built
# the model under torch.device("cuda"), where wav2vec2's SpecAugment met a CPU tensor; now built as the memory
# harness builds it), their predictions unchanged (predictions/timing24-holdout.json).
#   OUT=dir bash calibrate/runs/families22b_run.sh SHA_TIMING24B
set -u
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R"
(cd "$here"
 OMP_NUM_THREADS=2 timeout ${T:-250} python3 harness.py cases/families22b-input.jsonl --out "$R/f22b.jsonl" \
   --env "$R/env-f22b.json" --jobs 8 --mem-budget-gib 128 --timeout $(( ${T:-250} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" | tee "$R/f22b.log" | cut -c1-150 | tail -16
)
tar czf "$OUT/families22b.tgz" -C "$R" .
REPEAT=0 DEADLINE=${DT:-60} bash "$here/holdout_timing.sh" timing24b cases/timing24b-holdout-input.jsonl "$1" 2>&1 | tail -8
