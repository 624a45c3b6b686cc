#!/usr/bin/env bash
# Reserved memory of held out 8's two amp training cases under the validation protocol (harness.py), where the
# timing harness's run maximum read +2.5 / +2.9 % against the prediction (allocated exact); and their whole-run
# allocator streams (record_case_events.py) for calibrate/diff_events.py.
#   OUT=dir bash calibrate/runs/timing25_run.sh        (one device call, ~3 min)
set -u
export PYTHONUNBUFFERED=1
cd calibrate
C=cases/train-reserved-check-input.jsonl
timeout 150 python3 harness.py $C --out "$OUT/train-reserved-check.jsonl" --env "$OUT/env.json" --timeout 100 2>&1 |
  grep -v "^\[transformers\]" | tail -8
for id in rr8-l3b-ampbf16-adamw-b4s2048-ckpt rr8-gemma2_2b-ampbf16-adamw-b4s1024; do
  timeout 90 python3 record_case_events.py $C $id "$OUT/$id.events.json.gz" 2>&1 | grep -v "^\[transformers\]" | tail -2
done
ls -la "$OUT"
