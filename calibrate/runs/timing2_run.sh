#!/usr/bin/env bash
# The second step-time device run (issue 17 part 3: vision and LoRA), repo root on the GPU machine, nothing else
# on the GPU:   OUT=dir bash calibrate/runs/timing2_run.sh
# 1. cuDNN workspaces of the ResNets at the odd batch sizes (calibrate/conv_workspace.py --batches)
# 2. per-shape convolution times (calibrate/conv_time.py)
# 3. one profiled step of the profile cases (calibrate/step_profile.py)
# 4. the tuning cases of timing2, 5. its held-out cases (--quiet: read only after the predictions are committed)
set -u
cd calibrate
nvidia-smi --query-gpu=name,memory.used,utilization.gpu,clocks.sm,clocks.max.sm,driver_version --format=csv > "$OUT/nvidia-smi.csv" 2>&1
export PYTHONUNBUFFERED=1
python3 conv_workspace.py "$OUT/conv-ws-resnet-odd.json" --no-families --models=resnet18,resnet34,resnet50,resnet101,resnet152 \
  --image-sizes=224 --batches=3,5,6,10,12,20,24,40 > "$OUT/conv-ws.log" 2>&1; tail -1 "$OUT/conv-ws.log"
python3 conv_time.py "$OUT/conv-time.json" --deadline-s=${CONV_S:-170} 2>&1 | tee "$OUT/conv-time.log" | grep -v "^\[conv_time\] [0-9]"
python3 step_profile.py cases/profile-input.jsonl --out "$OUT/profile.json" --deadline-s ${PROF_S:-60} 2>&1 | tee "$OUT/profile.log" | cut -c1-170
python3 timing_corpus.py cases/timing2-input.jsonl --out "$OUT/timing2-tune.jsonl" --env "$OUT/env.json" \
  --warmup 2 --steps 4 --timeout 60 --deadline-s "${TUNE_S:-150}" 2>&1 | tee "$OUT/timing2-tune.log" | cut -c1-160
python3 timing_corpus.py cases/timing2-holdout-input.jsonl --out "$OUT/timing2-holdout.jsonl" --quiet \
  --warmup 2 --steps 4 --timeout 60 --deadline-s "${HOLD_S:-100}" 2>&1 | tee "$OUT/timing2-holdout.log" | cut -c1-160
nvidia-smi --query-gpu=memory.used,clocks.sm --format=csv >> "$OUT/nvidia-smi.csv" 2>&1
