#!/usr/bin/env bash
# fp32 / fp16 grouped_mm, index backward by repeat pattern, odd-length rows (calibrate/moe_odd_kernels.py), and
# profiles of held out 12's amp MoE step and two over-predicted GPU-bound LayerNorm models (BERT-large bf16 b32,
# GPT-2 medium bf16 b16), issue 17 part 3, eighth session.
#   OUT=dir bash calibrate/runs/timing27_run.sh     (one device call, ~3 min; $OUT/h200-moe-odd-kernels.json, $OUT/timing27.tgz)
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r27; mkdir -p "$R"
(cd calibrate
 { for m in torch torchvision transformers; do python3 -c "import $m; print('$m', $m.__version__)"; done
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; nvidia-smi --query-gpu=name,memory.used --format=csv; } > "$R/versions.txt" 2>&1
 timeout 200 python3 moe_odd_kernels.py "$OUT/h200-moe-odd-kernels.json" > "$R/moe-odd-kernels.log" 2>&1
 tail -40 "$R/moe-odd-kernels.log" | cut -c1-400
 { grep -h '"hm12-q3moe30-ampbf16-adamw-b2s2048-L3-ckpt"' cases/timing12-holdout-input.jsonl
   grep -h '"hf6-bertl-bf16-adamw-b32s512"\|"hf8-gpt2m-bf16-adamw-b16s1024"' cases/*-input.jsonl; } > "$R/profile13-input.jsonl"
 wc -l "$R/profile13-input.jsonl"
 timeout 150 python3 step_profile.py "$R/profile13-input.jsonl" --out "$R/step-profiles-8.json" --timeout 60 \
   --deadline-s 140 2>&1 | grep -v "^\[transformers\]" | tee "$R/step-profiles-8.log" | cut -c1-160
)
tar czf "$OUT/timing27.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
