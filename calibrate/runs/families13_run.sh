#!/usr/bin/env bash
# Family set 13, tuning rows (task heads: sequence / token classification; bart, mbart, whisper; llama4_text,
# granitemoe inference, granitemoeshared, hunyuan_v1_dense, apertus; measured before they are modelled), and the
# transformers sources they need. One call, ~6 min.
#   OUT=dir bash calibrate/runs/families13_run.sh   ($OUT/sources13.tar.gz, $OUT/families13.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.used --format=csv > "$OUT/nvidia-smi.txt" 2>&1
python3 "$here/dump_sources.py" "$OUT/sources13.tar.gz" bart mbart whisper llama4 granitemoe granitemoeshared \
  hunyuan_v1_dense apertus deberta_v2 modernbert distilbert roberta xlm_roberta auto > "$OUT/dump.log" 2>&1
python3 "$here/record_cases_budget.py" "$here/cases/families13-input.jsonl" "$work/families13" --jobs 6 \
  --budget-gib 125 --timeout 300 > "$OUT/progress.log" 2>&1
tar -C "$work" -czf "$OUT/families13.tgz" families13
tail -45 "$OUT/progress.log"
