#!/usr/bin/env bash
# Twentieth session's fifth call: the fp32 channels-last depthwise workspaces at every batch 1..32 and more above.
# cuDNN's engine for them changes with n non-monotonically (192 ch 28 x 28: wgrad 46.52 MiB at n 8, 92.46 at 16,
# none at 10 in the torchvision ConvNeXt-S b10 stream), so interpolating between measured batches misleads.
#   OUT=dir bash calibrate/runs/cl_workspace3_run.sh
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
b=$(seq -s, 1 32),36,40,44,48,56,64,72,80,96,112,128
timeout ${DT_S:-200} python3 conv_workspace.py "$OUT/cl4-fp32.json" \
  --models=convnext_tiny,convnext_small,convnext_base,convnext_large --hf-convnext --channels-last-only \
  --depthwise-only --dtypes=fp32 --cl-batches=$b 2> "$OUT/cl4-fp32.log"
echo "fp32 rc=$? $(grep -c done "$OUT/cl4-fp32.log") sigs"
gzip -9 "$OUT/cl4-fp32.json"
ls -la "$OUT"
