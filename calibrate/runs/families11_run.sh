#!/usr/bin/env bash
# Family set 11, tuning rows (modernbert, deberta-v2, ernie4_5, exaone4, seed_oss, arcee, granitemoe; measured
# before they are modelled), and the transformers sources of those and of further candidates. One call, ~5 min.
#   OUT=dir bash calibrate/runs/families11_run.sh   ($OUT/sources11.tar.gz, $OUT/families11.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
python3 "$here/dump_sources.py" "$OUT/sources11.tar.gz" modernbert deberta_v2 ernie4_5 ernie4_5_moe exaone4 \
  seed_oss arcee granitemoe granitemoeshared granitemoehybrid llama4 mistral3 qwen2_vl qwen2_5_vl lfm2 qwen3_next \
  falcon_h1 gemma3n hunyuan_v1_dense apertus > "$OUT/dump.log" 2>&1
CASE_TIMEOUT=240 bash "$here/record_cases.sh" "$here/cases/families11-input.jsonl" "$work/families11" 6
tar -C "$work" -czf "$OUT/families11.tgz" families11
