#!/usr/bin/env bash
# Held out 14 and the host-tiny set timed again in another device call (issue 17 part 3, ninth session): their
# host-bound rows moved by up to 1.5x between the passes of one call (GPT-2 medium bf16 checkpointed b8 s512:
# 73 / 113 ms), so each gets a second call's value (timing_merge.py without --append).
#   OUT=dir bash calibrate/runs/timing34_run.sh     (~3 min; $OUT/timing14b.tgz, $OUT/timing34.tgz)
set -u
export PYTHONUNBUFFERED=1
REPEAT=0 DEADLINE=120 bash calibrate/holdout_timing.sh timing14b cases/timing14-holdout-input.jsonl \
  2ada6ca36aac69864becf71ed92264607e05017b7a0498f93c3c70027517098b 2>&1 | grep -v "^\[transformers\]" | tail -4
R=$OUT/r34; mkdir -p "$R"
(cd calibrate
 timeout 200 python3 host_issue.py cases/host-tiny-input.jsonl --out "$R/host-tiny-2.json" --steps 6 --timeout 60 \
   --deadline-s 170 2>&1 | grep -v "^\[transformers\]" | tee "$R/host-tiny-2.log" | cut -c1-160
)
tar czf "$OUT/timing34.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
