#!/usr/bin/env bash
# Twenty-fifth session, third call: why four of set 30's / family set 30's rows missed (NOTES-time.md, twenty-third
# round). (1) T5-base LoRA with a saved lm_head: every allocator event (its weights read 18.5 MiB and its forward
# 87 MiB over the prediction). (2) One profiled step each of T5-base full and LoRA, ViT-B/16 amp b48 and GPT-2
# medium LoRA (GPU busy against wall: host- or GPU-bound). (3) Host microseconds of a frozen Linear and of peft's
# LoRA Linear beside a trained one. (4) The four timed again (a second call's spread).
#   OUT=dir bash calibrate/runs/probe35_run.sh
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export PYTHONUNBUFFERED=1
C=cases/probe35-input.jsonl
timeout 120 python3 record_case_events.py cases/families30-input.jsonl f30-t5b-bf16-r8-qv-lmhead-b10s400t100 \
  "$OUT/f30-t5b-events.json.gz" >> "$OUT/log.txt" 2>&1 || echo "record_case_events failed (log.txt)"
timeout 200 python3 step_profile.py "$C" --out "$OUT/step-profiles-35.json" --timeout 60 >> "$OUT/log.txt" 2>&1 \
  || echo "step_profile failed or timed out"
timeout 100 python3 host_overhead.py "$OUT/host-overhead-run5.json" linear_nobias,linear_frozen,lora_linear,dropout \
  >> "$OUT/log.txt" 2>&1 || echo "host_overhead failed or timed out"
timeout 150 python3 timing_corpus.py "$C" --out "$OUT/probe35-timing.jsonl" --env "$OUT/env.json" --quiet \
  --warmup 2 --steps 4 --timeout 60 --deadline-s 110 >> "$OUT/log.txt" 2>&1 || echo "timing failed or timed out"
gzip -f "$OUT/step-profiles-35.json" 2>/dev/null
grep -v "^\[transformers\]" "$OUT/log.txt" | cut -c1-160 | tail -40
ls -la "$OUT"
