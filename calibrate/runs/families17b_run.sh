#!/usr/bin/env bash
# Family set 17, the rows the first call had no time for (it stopped at 330 s of recordings), with AlbertXL and
# MPNet rows replaced by what transformers accepts (no checkpointing for ALBERT, eager only for MPNet). ~8 min.
#   OUT=dir bash calibrate/runs/families17b_run.sh   ($OUT/families17b.tgz)
set -u
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
timeout 430 python3 "$here/record_cases_budget.py" "$here/cases/families17b-input.jsonl" "$work/families17b" --jobs 8 \
  --budget-gib 125 --timeout 300 > "$OUT/progress.log" 2>&1
tar -C "$work" -czf "$OUT/families17b.tgz" families17b
tail -50 "$OUT/progress.log"
