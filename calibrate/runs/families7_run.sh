#!/usr/bin/env bash
# Family set 7, tuning rows (qwen2_moe, opt, roberta / xlm-roberta, gptj, falcon; measured before they were
# modelled), and the transformers sources of the next candidate families. One device call, ~4 min. The device
# returns at most 8 files, so the recordings come back as one archive.
#   OUT=dir bash calibrate/runs/families7_run.sh   ($OUT/sources.tar.gz, $OUT/families7.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.used --format=csv > "$OUT/nvidia-smi.txt" 2>&1
python3 "$here/dump_sources.py" "$OUT/sources.tar.gz" qwen2_moe opt roberta xlm_roberta gptj falcon smollm3 olmo \
  olmoe gpt_bigcode bloom mpt distilbert nemotron glm4 > "$OUT/dump.log" 2>&1
CASE_TIMEOUT=300 bash "$here/record_cases.sh" "$here/cases/families7-input.jsonl" "$work/families7" 4
tar -C "$work" -czf "$OUT/families7.tgz" families7
