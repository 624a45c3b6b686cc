#!/usr/bin/env bash
# Held out 13 timed again in another device call (the host's speed between calls: its host-bound rows all read
# 10 .. 17 % low in timing29), then profiles of its two largest host-bound misses (GPT-2 XL bf16 checkpointed b2,
# T5-base bf16), issue 17 part 3, eighth session.
#   OUT=dir bash calibrate/timing30_run.sh     (one device call, ~3 min; $OUT/timing13b.tgz, $OUT/timing30.tgz)
set -u
export PYTHONUNBUFFERED=1
REPEAT=0 DEADLINE=150 bash calibrate/holdout_timing.sh timing13b cases/timing13-holdout-input.jsonl \
  9692ebeab3a21b3b7f03c044863aa2ac1d06387d80b64cfa3cba445a9d75c18d 2>&1 | grep -v "^\[transformers\]" | tail -6
R=$OUT/r30; mkdir -p "$R"
(cd calibrate
 grep -E '"(hf13-gpt2xl-bf16-adamw-b2s1024-ckpt|hm13-t5base-bf16-adamw-b16s512-t256)"' \
   cases/timing13-holdout-input.jsonl > "$R/profile-input.jsonl"
 timeout 100 python3 step_profile.py "$R/profile-input.jsonl" --out "$R/step-profiles-10.json" --timeout 45 \
   --deadline-s 90 2>&1 | grep -v "^\[transformers\]" | tee "$R/step-profiles-10.log" | cut -c1-160
)
tar czf "$OUT/timing30.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
