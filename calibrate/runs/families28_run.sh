#!/usr/bin/env bash
# Twentieth session's fourth call: whole-run allocator streams of two family set 26 rows that missed blind
# (HF ConvNeXt-B 384 amp fp16 b6: allocated +24 %; torchvision ConvNeXt-S fp32 b10: reserved -5.2 %) and of the
# first one in amp bf16 (is the miss fp16's?), for calibrate/diff_events.py.
#   OUT=dir bash calibrate/runs/families28_run.sh
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R/rec"
(cd "$here"
 timeout ${REC_S:-200} python3 record_cases_budget.py cases/families26-record2-input.jsonl "$R/rec" \
   --jobs 3 --budget-gib 120 --timeout $(( ${REC_S:-200} - 10 )) > "$R/rec-progress.log" 2>&1
 tail -5 "$R/rec-progress.log" | cut -c1-160
)
tar czf "$OUT/families28.tgz" -C "$R" .
ls -la "$OUT"
