#!/usr/bin/env bash
# The step-time corpus's device run (issue 17 part 3), repo root on the GPU machine, nothing else on the GPU:
#   OUT=dir bash calibrate/runs/timing_run.sh
# 1. op-level rates (calibrate/op_rates.py -> $OUT/op-rates.json), 2. the tuning cases, 3. the held-out cases
# (--quiet: their timings are not printed; they are read only after the predictions are committed).
set -u
nvidia-smi --query-gpu=name,memory.used,utilization.gpu,clocks.sm,clocks.max.sm,driver_version --format=csv > "$OUT/nvidia-smi.csv" 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv >> "$OUT/nvidia-smi.csv" 2>&1
export PYTHONUNBUFFERED=1
python3 calibrate/op_rates.py "$OUT/op-rates.json" 2>&1 | tee "$OUT/op-rates.log" | grep -v "^\[op_rates\] .* done"
python3 calibrate/timing_corpus.py calibrate/cases/timing-input.jsonl --out "$OUT/timing-tune.jsonl" --env "$OUT/env.json" \
  --warmup 2 --steps 4 --timeout 60 --deadline-s "${TUNE_S:-210}" 2>&1 | tee "$OUT/timing-tune.log" | cut -c1-160
python3 calibrate/timing_corpus.py calibrate/cases/timing-holdout-input.jsonl --out "$OUT/timing-holdout.jsonl" --quiet \
  --warmup 2 --steps 4 --timeout 60 --deadline-s "${HOLD_S:-90}" 2>&1 | tee "$OUT/timing-holdout.log" | cut -c1-160
nvidia-smi --query-gpu=memory.used,clocks.sm --format=csv >> "$OUT/nvidia-smi.csv" 2>&1
