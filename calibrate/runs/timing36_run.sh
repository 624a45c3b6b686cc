#!/usr/bin/env bash
# Held-out step-time set 36 (issue 17 part 3, thirty-sixth session): the first timed steps of the model types family
# sets 34 .. 61 added, one at a time (calibrate/holdout_timing.sh, one pass). On an H100 the rows of
# timing36-h100-holdout-input.jsonl (priced at the H100's tables), else timing36-holdout-input.jsonl; each input is
# checked against the sha256 its committed predictions name.
#   OUT=dir bash calibrate/runs/timing36_run.sh      (DEADLINE seconds, default 360)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu"
case "$gpu" in
  *H100*) base=timing36-h100-holdout ;;
  *) base=timing36-holdout ;;
esac
want=$(python3 -c "import json; print(json.load(open('$here/../data/validation/predictions/$base.json'))['input_sha256'])")
REPEAT=0 DEADLINE=${DEADLINE:-360} bash "$here/holdout_timing.sh" timing36 "cases/$base-input.jsonl" "$want" 2>&1 |
  grep -v "^\[transformers\]" | tail -6
