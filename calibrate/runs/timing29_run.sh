#!/usr/bin/env bash
# Held out 13 (predictions committed with its input), measured blind, then profiles of three of its cases (after
# they were timed), issue 17 part 3, eighth session.
#   OUT=dir bash calibrate/runs/timing29_run.sh     (one device call, ~5 min; $OUT/timing13.tgz, $OUT/timing29.tgz)
set -u
export PYTHONUNBUFFERED=1
DEADLINE=200 bash calibrate/holdout_timing.sh timing13 cases/timing13-holdout-input.jsonl \
  9692ebeab3a21b3b7f03c044863aa2ac1d06387d80b64cfa3cba445a9d75c18d 2>&1 | grep -v "^\[transformers\]" | tail -22
R=$OUT/r29; mkdir -p "$R"
(cd calibrate
 grep -E '"(hm13-dsv2lite-ampbf16-adamw-b2s2048-L3-ckpt|hf13-starcoder2_3b-ampbf16-adamw-b1s4096-ckpt|hm13-gptoss20-ampbf16-adamw-b1s1024-L3-eager)"' \
   cases/timing13-holdout-input.jsonl > "$R/profile13-input.jsonl"
 timeout 150 python3 step_profile.py "$R/profile13-input.jsonl" --out "$R/step-profiles-9.json" --timeout 60 \
   --deadline-s 140 2>&1 | grep -v "^\[transformers\]" | tee "$R/step-profiles-9.log" | cut -c1-160
)
tar czf "$OUT/timing29.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
