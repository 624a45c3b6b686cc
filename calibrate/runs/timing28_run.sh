#!/usr/bin/env bash
# The GEMM grid at factor-2 spacing (calibrate/gemm_grid.py) and softmax by row length (calibrate/softmax_rows.py),
# issue 17 part 3, eighth session.
#   OUT=dir bash calibrate/runs/timing28_run.sh     (one device call, ~4 min; $OUT/h200-gemm-grid.json, $OUT/h200-softmax-rows.json)
set -u
export PYTHONUNBUFFERED=1
cd calibrate
{ for m in torch; do python3 -c "import $m; print('$m', $m.__version__)"; done; nproc; cat /proc/loadavg; date -u +%FT%TZ
  nvidia-smi --query-gpu=name,memory.used,clocks.sm,clocks.max.sm --format=csv; } > "$OUT/versions28.txt" 2>&1
timeout 60 python3 softmax_rows.py "$OUT/h200-softmax-rows.json" 2>&1 | tail -5 | cut -c1-200
timeout 420 python3 gemm_grid.py "$OUT/h200-gemm-grid.json" --deadline-s 400 2>&1 | tail -5
ls -la "$OUT"
