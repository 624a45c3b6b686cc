#!/usr/bin/env bash
# Twenty-first session: the dense-batch fp32 channels-last depthwise workspaces for 96+ channels, which the
# twentieth session's fifth call (cl_workspace3_run.sh, 40-80 channels) had no time for. The torchvision ConvNeXt
# T / S / B / L shapes at 224 (the Hugging Face ConvNext / V2 tiny, base, large widths share them) first, then the
# Hugging Face 384 px shapes of the same widths.
#   OUT=dir bash calibrate/runs/cl_workspace4_run.sh
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
b=$(seq -s, 1 32),36,40,44,48,56,64,72,80,96,112,128
timeout ${DT1_S:-270} python3 conv_workspace.py "$OUT/cl5-fp32-224.json" \
  --models=convnext_tiny,convnext_small,convnext_base,convnext_large --hf-convnext --hf-sizes=224 \
  --hf-widths=96,128,192 --channels-last-only --depthwise-only --min-channels=96 --dtypes=fp32 \
  --cl-batches=$b 2> "$OUT/cl5-fp32-224.log"
echo "224 rc=$? $(grep -c done "$OUT/cl5-fp32-224.log") sigs"
timeout ${DT2_S:-240} python3 conv_workspace.py "$OUT/cl5-fp32-384.json" \
  --models=convnext_tiny --hf-convnext --hf-sizes=384 --hf-widths=96,128,192 --channels-last-only \
  --depthwise-only --min-channels=96 --dtypes=fp32 --cl-batches=$b --skip="$OUT/cl5-fp32-224.json" \
  2> "$OUT/cl5-fp32-384.log"
echo "384 rc=$? $(grep -c done "$OUT/cl5-fp32-384.log") sigs"
gzip -9 "$OUT"/cl5-*.json
ls -la "$OUT"
