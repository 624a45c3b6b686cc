#!/usr/bin/env bash
# Profiles of the GPU-bound step-time misses (issue 17 part 3, sixth session): six training steps
# (step_profile.py: Qwen3-0.6B and Qwen2.5-0.5B amp, Qwen2.5-0.5B bf16 LoRA, GPT-2 small bf16 SGD, RegNetX-3.2GF,
# ViT-B/16 b96) and two prefills (decode_profile.py's generate(1) kernels: Gemma-3-1B, Qwen3-1.7B).
#   OUT=dir bash calibrate/runs/timing12_run.sh        (one device call, ~5 min; packed into $OUT/timing12.tgz)
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p "$R"
(cd calibrate
 { for m in torch torchvision transformers peft; do python3 -c "import $m; print('$m', $m.__version__)"; done
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; } > "$R/versions.txt" 2>&1
 nvidia-smi --query-gpu=name,memory.used,clocks.sm,clocks.max.sm --format=csv > "$R/nvidia-smi-before.csv" 2>&1
 sha256sum cases/profile4-input.jsonl cases/profile4-infer-input.jsonl > "$R/cases.sha256"
 timeout 330 python3 step_profile.py cases/profile4-input.jsonl --out "$R/step-profiles-4.json" --timeout 90 \
   --deadline-s 320 2>&1 | grep -v "^\[transformers\]" | tee "$R/step-profiles-4.log" | cut -c1-160
 timeout 150 python3 decode_profile.py cases/profile4-infer-input.jsonl --out "$R/prefill-profiles.json" \
   --timeout 100 2>&1 | grep -v "^\[transformers\]" | tee "$R/prefill-profiles.log" | cut -c1-160
)
tar czf "$OUT/timing12.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
