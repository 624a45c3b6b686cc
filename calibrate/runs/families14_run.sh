#!/usr/bin/env bash
# Family set 14: the held-out set of family set 13 (predicted before measuring:
# data/validation/predictions/families14-holdout.json). One call, ~5 min.
#   OUT=dir bash calibrate/runs/families14_run.sh   ($OUT/families14.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.used --format=csv > "$OUT/nvidia-smi.txt" 2>&1
python3 "$here/record_cases_budget.py" "$here/cases/families14-holdout-input.jsonl" "$work/families14" --jobs 8 \
  --budget-gib 125 --timeout 300 > "$OUT/progress.log" 2>&1
tar -C "$work" -czf "$OUT/families14.tgz" families14
tail -45 "$OUT/progress.log"
