#!/usr/bin/env bash
# After held out 3 (timing7_run.sh) missed low on most rows: is it the host's speed today, or mechanisms?
#   OUT=dir bash calibrate/runs/timing8_run.sh        (one device call, ~6 min on an H200; nothing else on the GPU)
# 1. drift: 12 cases measured in earlier calls (timing-drift-input.jsonl), timed again as they were then;
# 2. decode_profile.py on held out 3's two inference cases and two tuning / held-out 1 decode cases;
# 3. step_profile.py on held out 3's training cases (kernels by name, GPU busy vs wall);
# 4. host_overhead.py (host microseconds per module class, against h200-host-overhead.tsv);
# 5. conv_time.py fp16 rows for the held-out models whose fp16 convs look up bf16's rows.
# Everything is packed into $OUT/timing8.tgz.
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p "$R"
(cd calibrate
 { for m in torch torchvision transformers; do python3 -c "import $m; print('$m', $m.__version__)"; done
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; } > "$R/versions.txt" 2>&1
 nvidia-smi --query-gpu=name,memory.used,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$R/smi.csv"
 timeout 110 python3 timing_corpus.py cases/timing-drift-input.jsonl --out "$R/drift.jsonl" \
   --warmup 2 --steps 4 --timeout 60 --deadline-s 95 2>&1 | grep -v "^\[transformers\]" | tee "$R/drift.log" | cut -c1-150
 timeout 120 python3 decode_profile.py cases/decode-profile-input.jsonl --out "$R/decode.json" --timeout 60 2>&1 |
   grep -v "^\[transformers\]" | tee "$R/decode.log" | cut -c1-200
 timeout 120 python3 step_profile.py cases/timing3-profile-input.jsonl --out "$R/profile.json" --timeout 40 \
   --deadline-s 105 2>&1 | grep -v "^\[transformers\]" | tee "$R/profile.log" | cut -c1-160
 timeout 70 python3 host_overhead.py "$R/host.json" > "$R/host.log" 2>&1; tail -3 "$R/host.log"
 timeout 80 python3 conv_time.py "$R/conv-fp16.json" --models=vgg19_bn,resnext101_64x4d,efficientnet_b4 \
   --batches=8,32,128 --dtypes=fp16 --deadline-s=70 > "$R/conv.log" 2>&1; tail -2 "$R/conv.log"
)
tar czf "$OUT/timing8.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
