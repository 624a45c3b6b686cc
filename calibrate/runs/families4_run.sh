#!/usr/bin/env bash
# Family set 4, tuning rows (granite, phi, stablelm, cohere; measured before they were modelled), and the
# transformers sources their builders mirror. One device call, ~3 min. The device returns at most 8 files, so the
# recordings come back as one archive.
#   OUT=dir bash calibrate/runs/families4_run.sh   ($OUT/sources.tar.gz, $OUT/families4.tgz: *.json.gz, measured.jsonl, env.json, log)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.used --format=csv > "$OUT/nvidia-smi.txt" 2>&1
python3 "$here/dump_sources.py" "$OUT/sources.tar.gz" granite phi stablelm cohere qwen2_moe falcon opt roberta gptj \
  > "$OUT/dump.log" 2>&1
CASE_TIMEOUT=300 bash "$here/record_cases.sh" "$here/cases/families4-input.jsonl" "$work/families4" 4
tar -C "$work" -czf "$OUT/families4.tgz" families4
