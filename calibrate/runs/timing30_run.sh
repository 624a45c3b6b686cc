#!/usr/bin/env bash
# Held out 13 timed again in another device call (the host's speed between calls: its host-bound rows all read
# 10 .. 17 % low in timing29); then host_issue.py on its host-bound misses with and without checkpointing and two
# GPU-bound controls (issue time against wall, hidden syncs, Python time per function); then profiles of its two
# largest host-bound misses (GPT-2 XL bf16 checkpointed b2, T5-base bf16). Issue 17 part 3, written in the eighth
# session, first run in the ninth.
#   OUT=dir bash calibrate/runs/timing30_run.sh     (one device call, ~6 min; $OUT/timing13b.tgz, $OUT/timing30.tgz)
set -u
export PYTHONUNBUFFERED=1
REPEAT=0 DEADLINE=150 bash calibrate/holdout_timing.sh timing13b cases/timing13-holdout-input.jsonl \
  9692ebeab3a21b3b7f03c044863aa2ac1d06387d80b64cfa3cba445a9d75c18d 2>&1 | grep -v "^\[transformers\]" | tail -6
R=$OUT/r30; mkdir -p "$R"
(cd calibrate
 timeout 150 python3 host_issue.py cases/host-issue-input.jsonl --out "$R/host-issue.json" --timeout 50 \
   --deadline-s 110 2>&1 | grep -v "^\[transformers\]" | tee "$R/host-issue.log" | cut -c1-160
 grep -E '"(hf13-gpt2xl-bf16-adamw-b2s1024-ckpt|hm13-t5base-bf16-adamw-b16s512-t256)"' \
   cases/timing13-holdout-input.jsonl > "$R/profile-input.jsonl"
 timeout 100 python3 step_profile.py "$R/profile-input.jsonl" --out "$R/step-profiles-10.json" --timeout 45 \
   --deadline-s 70 2>&1 | grep -v "^\[transformers\]" | tee "$R/step-profiles-10.log" | cut -c1-160
)
tar czf "$OUT/timing30.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
