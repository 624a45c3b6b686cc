#!/usr/bin/env bash
# For the next session with a device (written in the twenty-fifth, whose device time ran out): (1) the whole-run
# allocator recording of family set 31's one blind miss, t5-small bf16 checkpointed at b6 x 700 (+7.90 % reserved,
# data/validation/NOTES.md "Family set 31"), to diff with scripts/diff-case-events.sh; (2) peft's LoRA Linear as a
# host-overhead class beside a frozen and a trained Linear (host_overhead.py lora_linear, now built through
# peft.inject_adapter_in_model). About 2 minutes.
#   OUT=dir bash calibrate/runs/t5miss36_run.sh
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export PYTHONUNBUFFERED=1
timeout 150 python3 record_case_events.py cases/families31-input.jsonl f31-t5s-bf16-b6s700t90-ckpt \
  "$OUT/f31-t5s-bf16-b6s700t90-ckpt.json.gz" >> "$OUT/log.txt" 2>&1 || echo "record_case_events failed (log.txt)"
timeout 120 python3 host_overhead.py "$OUT/host-overhead-run6.json" linear_nobias,linear_frozen,lora_linear \
  >> "$OUT/log.txt" 2>&1 || echo "host_overhead failed or timed out"
grep -v "^\[transformers\]\|preimport" "$OUT/log.txt" | cut -c1-160 | tail -20
