#!/usr/bin/env bash
# Family set 13, the 19 tuning rows the first call did not reach (its scheduler stopped on a half-written
# recording of a running case: fixed in record_cases_budget.py). One call, ~5 min.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.used --format=csv > "$OUT/nvidia-smi.txt" 2>&1
python3 "$here/record_cases_budget.py" "$here/cases/families13b-input.jsonl" "$work/families13b" --jobs 8 \
  --budget-gib 125 --timeout 300 > "$OUT/progress.log" 2>&1
tar -C "$work" -czf "$OUT/families13b.tgz" families13b
tail -45 "$OUT/progress.log"
