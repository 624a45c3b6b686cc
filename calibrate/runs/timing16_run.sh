#!/usr/bin/env bash
# SDPA with an explicit (sliding-window) mask: calibrate/sdpa_masked.py (issue 17 part 3, sixth session).
#   OUT=dir bash calibrate/runs/timing16_run.sh        (one device call, ~1 min; $OUT/h200-sdpa-masked.json)
set -u
export PYTHONUNBUFFERED=1
cd calibrate
timeout 240 python3 sdpa_masked.py "$OUT/h200-sdpa-masked.json" 2>&1 | tail -30
ls -la "$OUT"
