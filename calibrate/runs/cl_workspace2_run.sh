#!/usr/bin/env bash
# Twentieth session's second call: the channels-last conv workspaces the first call (cl_workspace_run.sh) did not
# reach: its 16-bit runs stopped at their time limit, and on the meta device the Hugging Face ConvNeXt convs after
# the first downsampler looked contiguous (now marked channels-last by model). Skips every (shape, dtype) the first
# call measured; 16-bit rows at 7 batches (their depthwise wgrad is affine in n).
#   OUT=dir bash calibrate/runs/cl_workspace2_run.sh
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
raw=../data/calibration/raw
skip=$raw/h200-conv-workspace-cl-fp32.json.gz,$raw/h200-conv-workspace-cl-bf16a.json.gz,$raw/h200-conv-workspace-cl-fp16a.json.gz
models=convnext_tiny,convnext_small,convnext_base,convnext_large
for dt in fp32 bf16 fp16; do
  b=1,4,8,16,24,32,48,64,96,128; [ $dt = fp32 ] || b=1,8,16,24,32,64,128
  timeout ${DT_S:-150} python3 conv_workspace.py "$OUT/cl2-$dt.json" --models=$models --hf-convnext \
    --channels-last-only --dtypes=$dt --skip=$skip --cl-batches=$b 2> "$OUT/cl2-$dt.log"
  echo "$dt rc=$? $(grep -c done "$OUT/cl2-$dt.log") sigs; $(tail -1 "$OUT/cl2-$dt.log" | cut -c1-150)"
done
for f in "$OUT"/cl2-*.json; do gzip -9 "$f"; done
ls -la "$OUT"
