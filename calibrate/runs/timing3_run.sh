#!/usr/bin/env bash
# The third step-time device run (issue 17 part 3), repo root on the GPU machine, nothing else on the GPU:
#   OUT=dir bash calibrate/runs/timing3_run.sh
# 1. host cost per module class (host_overhead.py), 2. batch-norm times per shape (bn_time.py), 3. the fp32
# conv rows the first run's deadline cut (conv_time.py --from-sig) and fp16, 4. the distributed held-out set
# (record_dist_cases.sh, 11 cases at a time: last, since it shares the GPU). Everything is packed into
# $OUT/timing3.tgz and the distributed recordings into timing3-dist.tgz (the device returns at most 8 files,
# 16 MiB each); the distributed measured.jsonl and log also alone.
set -u
nvidia-smi --query-gpu=name,memory.used,utilization.gpu,clocks.sm,clocks.max.sm,driver_version --format=csv > "$OUT/nvidia-smi.csv" 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
(cd calibrate
 timeout 60 python3 host_overhead.py "$R/host-overhead.json" 2>&1 | tee "$R/host.log" | tail -40
 timeout 130 python3 bn_time.py "$R/bn-time.json" --deadline-s=${BN_S:-100} 2>&1 | tee "$R/bn-time.log"
 timeout 130 python3 conv_time.py "$R/conv-time-fp32b.json" --dtypes=fp32 --from-sig=${FROM_SIG:-652} --deadline-s=${C32_S:-100} 2>&1 | tee "$R/conv-time-fp32b.log" | grep -v "^\[conv_time\] [0-9]"
 timeout 110 python3 conv_time.py "$R/conv-time-fp16.json" --dtypes=fp16 --deadline-s=${C16_S:-80} 2>&1 | tee "$R/conv-time-fp16.log" | grep -v "^\[conv_time\] [0-9]"
)
CASE_TIMEOUT=200 timeout 200 bash calibrate/record_dist_cases.sh calibrate/cases/distributed-holdout-input.jsonl "$R/dist" 11 > "$R/dist.log" 2>&1
tail -3 "$R/dist/log" 2>/dev/null
nvidia-smi --query-gpu=memory.used,clocks.sm --format=csv >> "$OUT/nvidia-smi.csv" 2>&1
cp "$R/dist/measured.jsonl" "$OUT/dist-measured.jsonl" 2>/dev/null; cp "$R/dist/log" "$OUT/dist-log.txt" 2>/dev/null
tar czf "$OUT/timing3-dist.tgz" -C "$R" dist && rm -rf "$R/dist"
tar czf "$OUT/timing3.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
