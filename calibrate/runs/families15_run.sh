#!/usr/bin/env bash
# Family set 15, tuning rows (marian, pegasus, m2m_100, mt5, umt5, camembert, electra, cohere2, glm4_moe, gpt_neo,
# vit; measured before they are modelled). One call, ~6 min.
#   OUT=dir bash calibrate/runs/families15_run.sh   ($OUT/families15.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.used --format=csv > "$OUT/nvidia-smi.txt" 2>&1
timeout 530 python3 "$here/record_cases_budget.py" "$here/cases/families15-input.jsonl" "$work/families15" --jobs 8 \
  --budget-gib 125 --timeout 300 > "$OUT/progress.log" 2>&1
tar -C "$work" -czf "$OUT/families15.tgz" families15
tail -45 "$OUT/progress.log"
