#!/usr/bin/env bash
# Strided copies by inner run and broadcasts by broadcast dims (calibrate/copy_runs.py), issue 17 part 3, seventh
# session.   OUT=dir bash calibrate/runs/timing22_run.sh     (one device call, ~1 min; $OUT/h200-copy-runs.json)
set -u
export PYTHONUNBUFFERED=1
cd calibrate
timeout 200 python3 copy_runs.py "$OUT/h200-copy-runs.json" 2>&1 | tail -60
ls -la "$OUT"
