#!/usr/bin/env bash
# Nineteenth session's first call. 1) Whole-run allocator streams (record_case_events.py) of the five set-23/24 rows
# whose reserved peak missed (Falcon-H1 served in bf16 +87 %, Idefics3-8B eager +6.4 %, ConvNeXt V2-B +5.6 %,
# Nemotron-H amp acc2 -3.8 %, Idefics3-2B +1.6 %), for calibrate/diff_events.py against the replay.
# 2) The twelve rows the eighteenth session's final call did not reach (cases/families25-left-input.jsonl: lines
# copied unchanged from families24-input.jsonl / families23-left-input.jsonl; predicted at 5ddeb0a in
# predictions/families24-holdout.json and families23-left.json), through harness.py, 8 at once, biggest first.
#   OUT=dir bash calibrate/runs/families25_run.sh   ($OUT/families25.tgz)
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R/rec"
(cd "$here"
 { nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ
   nvidia-smi --query-gpu=name,memory.used,driver_version --format=csv; } > "$R/probe.txt" 2>&1
 timeout ${REC_S:-280} python3 record_cases_budget.py cases/families25-record-input.jsonl "$R/rec" \
   --jobs 5 --budget-gib 128 --timeout $(( ${REC_S:-280} - 15 )) > "$R/rec-progress.log" 2>&1
 tail -8 "$R/rec-progress.log" | cut -c1-160
 sha256sum cases/families25-left-input.jsonl > "$R/cases.sha256"
 timeout ${LEFT_S:-270} python3 harness.py cases/families25-left-input.jsonl --out "$R/f25left.jsonl" \
   --env "$R/env-f25left.json" --jobs 8 --mem-budget-gib 128 --timeout $(( ${LEFT_S:-270} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" > "$R/f25left.log"; grep -E "summary| ERROR | OOM " "$R/f25left.log" | cut -c1-160 | tail -16
)
tar czf "$OUT/families25.tgz" -C "$R" .
ls -la "$OUT"
