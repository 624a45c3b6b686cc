#!/usr/bin/env bash
# Two checks of the step-time model's inputs (issue 17 part 3): GEMM time by operand layout (gemm_layout.py) and
# isolated vs in-model conv time (conv_check.py, ResNet-50 b128 and VGG-16 b64).  OUT=dir bash calibrate/runs/timing6_run.sh
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
(cd calibrate
 timeout 120 python3 gemm_layout.py "$R/gemm-layout.json" 2>&1 | tee "$R/gemm-layout.log" | grep -v "^\[gemm_layout\] fp"
 grep "^\[gemm_layout\] fp" "$R/gemm-layout.log" | head -30
 timeout 90 python3 conv_check.py "$R/conv-check-resnet50.json" resnet50 128 2>&1 | tail -2
 timeout 90 python3 conv_check.py "$R/conv-check-vgg16.json" vgg16 64 2>&1 | tail -2
)
tar czf "$OUT/timing6.tgz" -C "$R" . && rm -rf "$R"
