#!/usr/bin/env bash
# The fourth step-time device run (issue 17 part 3): host cost per module class (host_overhead.py, after the
# third run's crashed on parameter-free chains) and one profiled step of six tuning cases the model missed.
#   OUT=dir bash calibrate/runs/timing4_run.sh      (everything packed into $OUT/timing4.tgz)
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,memory.used,clocks.sm --format=csv > "$R/nvidia-smi.csv" 2>&1
(cd calibrate
 timeout 120 python3 host_overhead.py "$R/host-overhead.json" 2>&1 | tee "$R/host.log"
 timeout 100 python3 step_profile.py cases/profile2-input.jsonl --out "$R/profile2.json" 2>&1 | tee "$R/profile2.log" | grep "^\[profile\]" | cut -c1-170
)
tar czf "$OUT/timing4.tgz" -C "$R" . && rm -rf "$R"
