#!/usr/bin/env bash
# Held out 12 (the first MoE and T5 step times, predictions committed in 0919114), then the grouped_mm and SDPA
# dropout rates (calibrate/moe_attn_kernels.py) and profiles of four of its cases (after they were timed), issue
# 17 part 3, eighth session.
#   OUT=dir bash calibrate/runs/timing26_run.sh     (one device call, ~9 min; $OUT/timing12.tgz, $OUT/h200-moe-attn-kernels.json,
#                                               $OUT/timing26.tgz)
set -u
export PYTHONUNBUFFERED=1
DEADLINE=190 bash calibrate/holdout_timing.sh timing12 cases/timing12-holdout-input.jsonl \
  c2fedeb2d231cd66c6a5e59b7974a9bfa3105baf8ed97d3c34cffb0e6ad24c91 2>&1 | tail -30
R=$OUT/r26; mkdir -p "$R"
(cd calibrate
 timeout 100 python3 moe_attn_kernels.py "$OUT/h200-moe-attn-kernels.json" > "$R/moe-attn-kernels.log" 2>&1
 tail -50 "$R/moe-attn-kernels.log"
 grep -E '"(hm12-q3moe30-bf16-adamw-b4s2048-L4|hm12-gptoss20-bf16-adamw-b1s2048-L4-eager|hm12-t5base-ampbf16-adamw-b16s512-t128|hm12-mixtral-bf16-adamw-b2s2048-L2|hm12-dsv2lite-bf16-adamw-b2s2048-L4)"' \
   cases/timing12-holdout-input.jsonl > "$R/profile12-input.jsonl"
 timeout 170 python3 step_profile.py "$R/profile12-input.jsonl" --out "$R/step-profiles-7.json" --timeout 60 \
   --deadline-s 160 2>&1 | grep -v "^\[transformers\]" | tee "$R/step-profiles-7.log" | cut -c1-160
)
tar czf "$OUT/timing26.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
