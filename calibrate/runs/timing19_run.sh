#!/usr/bin/env bash
# LayerNorm and reductions by row length (calibrate/norm_reduce.py), and profiles of three held-out-7 misses measured
# earlier (StarCoder2-3B -13.6 %, ConvNeXt-S b128 -16.7 %, Swin-T b128 -17.4 %), issue 17 part 3, seventh session.
#   OUT=dir bash calibrate/runs/timing19_run.sh        (one device call, ~4 min; $OUT/h200-norm-reduce.json, $OUT/timing19.tgz)
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p "$R"
(cd calibrate
 { for m in torch torchvision transformers; do python3 -c "import $m; print('$m', $m.__version__)"; done
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; nvidia-smi --query-gpu=name,memory.used --format=csv; } > "$R/versions.txt" 2>&1
 timeout 150 python3 norm_reduce.py "$OUT/h200-norm-reduce.json" > "$R/norm-reduce.log" 2>&1; tail -3 "$R/norm-reduce.log"
 timeout 250 python3 step_profile.py cases/profile6-input.jsonl --out "$R/step-profiles-6.json" --timeout 110 \
   --deadline-s 240 2>&1 | grep -v "^\[transformers\]" | tee "$R/step-profiles-6.log" | cut -c1-160
)
tar czf "$OUT/timing19.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
