#!/usr/bin/env bash
# Profiles of nine step-time set 20 rows (the GPU-bound misses: Whisper fp32 / amp, ModernBERT, GraniteMoE, Llama 4's
# expert bmm; and host-bound rows over and under: their top-level op counts), then set 20 timed again (a second
# call: host-bound steps move between calls; the rows then carry both calls' mean). Issue 17 part 3. ~5 min.
#   OUT=dir bash calibrate/runs/profile20_run.sh   ($OUT/profile20.tgz)
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p "$R"
(cd calibrate
 { for m in torch torchvision transformers; do python3 -c "import $m; print('$m', $m.__version__)"; done
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; nvidia-smi --query-gpu=name,memory.used --format=csv; } > "$R/versions.txt" 2>&1
 timeout 250 python3 step_profile.py cases/profile20-input.jsonl --out "$R/step-profiles-20.json" --timeout 110 \
   --deadline-s 240 2>&1 | grep -v "^\[transformers\]" | tee "$R/step-profiles-20.log" | cut -c1-160
 timeout 200 python3 timing_corpus.py cases/timing20-holdout-input.jsonl --out "$R/timing20-call2.jsonl" \
   --env "$R/env.json" --quiet --warmup 2 --steps 4 --timeout 90 --deadline-s 150 2>&1 | grep -v "^\[transformers\]" |
   tee "$R/timing20-call2.log" | cut -c1-120
)
tar czf "$OUT/profile20.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
