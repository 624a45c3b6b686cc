#!/usr/bin/env bash
# Reserved memory of held out 6 / 7's four inference cases under the validation protocol (harness.py: one
# prefill + generate, as memplan validate predicts it), where the timing harness's max over its repeated
# generate() calls read +3.5 / +3.6 % against the prediction for the two small models; and the whole-run
# allocator streams of those two (record_case_events.py) for calibrate/diff_events.py.
#   OUT=dir bash calibrate/runs/timing18_run.sh        (one device call, ~2 min)
set -u
export PYTHONUNBUFFERED=1
cd calibrate
C=cases/infer-reserved-check-input.jsonl
timeout 200 python3 harness.py $C --out "$OUT/infer-reserved-check.jsonl" --env "$OUT/env.json" --timeout 120 2>&1 |
  grep -v "^\[transformers\]" | tail -12
for id in ir6-q3_06-infer-bf16-b16s2048-g8 ir7-gemma3_1b-infer-bf16-b8s2048-g8; do
  timeout 100 python3 record_case_events.py $C $id "$OUT/$id.events.json.gz" 2>&1 | grep -v "^\[transformers\]" | tail -2
done
ls -la "$OUT"
