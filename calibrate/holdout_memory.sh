#!/usr/bin/env bash
# Measures a held-out memory set whose predictions were committed before it is measured (harness.py, several
# cases at a time: memory is per process).
#   OUT=dir bash calibrate/holdout_memory.sh NAME CASES [SHA256]     (one device call, or part of one)
# NAME: the tarball's name ($OUT/NAME.tgz); CASES: the input, relative to calibrate/; SHA256: the input as committed
# with its predictions (checked: "INPUT CHANGED SINCE THE PREDICTIONS" when it differs). Packed: the JSONL results,
# the environment (harness.env_probe) and the log. TIMEOUT (seconds, default 200): the whole harness run.
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
NAME=$1 CASES=$2 EXPECT=${3:-}
T=${TIMEOUT:-200}
# The pool's budget: 120 GiB on the H200 the sets were written for, the card's memory less 8 GiB on a smaller one
# (an H100 80GB gives 71).
total_gib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
BUDGET=120
if [ -n "$total_gib" ] && [ "$total_gib" -lt 131072 ] 2>/dev/null; then BUDGET=$((total_gib / 1024 - 8)); fi
# MEM_BUDGET_GIB: a smaller pool, when another measurement shares the GPU in the same call.
if [ -n "${MEM_BUDGET_GIB:-}" ]; then BUDGET=$MEM_BUDGET_GIB; fi
here=$(cd "$(dirname "$0")" && pwd)
R=$OUT/$NAME; mkdir -p "$R"
(cd "$here"
 if [ -n "$EXPECT" ]; then
   echo "$EXPECT $CASES" | sha256sum -c - || echo "INPUT CHANGED SINCE THE PREDICTIONS"
 fi
 timeout "$T" python3 harness.py "$CASES" --out "$R/$NAME.jsonl" --env "$R/env-$NAME.json" \
   --jobs 6 --mem-budget-gib "$BUDGET" --timeout $((T - 10)) 2>&1 | grep -v "^\[transformers\]" > "$R/$NAME.log"
 grep -E "summary| ERROR | OOM " "$R/$NAME.log" | cut -c1-160 | tail -8
)
tar czf "$OUT/$NAME.tgz" -C "$R" . && rm -rf "$R"
