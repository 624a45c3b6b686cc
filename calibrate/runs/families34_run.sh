#!/usr/bin/env bash
# A call for a session with a device (written in the twenty-third session, which was lent none): family set 30,
# held out (cases/families30-input.jsonl, predicted in predictions/families30-holdout.json before any device saw it;
# input sha256 93b0a093e825e9a63957b238df94e411ec5f499ab4d8b9d0751f04007a58cf80): the memory rows through harness.py, then one timing pass of the uncapped rows
# (holdout_timing.sh, REPEAT=0) against the same predictions.
#   OUT=dir bash calibrate/runs/families34_run.sh 93b0a093e825e9a63957b238df94e411ec5f499ab4d8b9d0751f04007a58cf80
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R"
(cd "$here"
 echo "${1:-} cases/families30-input.jsonl" | sha256sum -c - || echo "INPUT CHANGED SINCE THE PREDICTIONS"
 timeout 220 python3 harness.py cases/families30-input.jsonl --out "$R/f30.jsonl" --env "$R/env-f30.json" \
   --jobs 6 --mem-budget-gib 120 --timeout 200 2>&1 | grep -v "^\[transformers\]" > "$R/f30.log"
 grep -E "summary| ERROR | OOM " "$R/f30.log" | cut -c1-160 | tail -8
)
tar czf "$OUT/families34.tgz" -C "$R" . && rm -rf "$R"
REPEAT=0 DEADLINE=${DEADLINE:-200} bash "$here/holdout_timing.sh" timing57 cases/families30-input.jsonl "${1:-}"
