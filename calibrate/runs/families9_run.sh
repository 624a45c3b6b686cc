#!/usr/bin/env bash
# Family set 9, tuning rows (smollm3, distilbert, gpt_bigcode, falcon, olmoe, gptj, bloom, glm4, nemotron, olmo;
# measured before they were modelled), and the transformers sources of those families. One device call, ~6 min.
# The device returns at most 8 files, so the recordings come back as one archive.
#   OUT=dir bash calibrate/runs/families9_run.sh   ($OUT/sources.tar.gz, $OUT/families9.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
nvidia-smi --query-gpu=name,memory.used --format=csv > "$OUT/nvidia-smi.txt" 2>&1
python3 "$here/dump_sources.py" "$OUT/sources.tar.gz" smollm3 distilbert gpt_bigcode falcon olmoe gptj bloom glm4 \
  nemotron olmo qwen2_moe opt roberta mpt > "$OUT/dump.log" 2>&1
CASE_TIMEOUT=300 bash "$here/record_cases.sh" "$here/cases/families9-input.jsonl" "$work/families9" 6
tar -C "$work" -czf "$OUT/families9.tgz" families9
