#!/usr/bin/env bash
# Twentieth session's first call: cuDNN workspaces of the channels-last convs (torchvision ConvNeXt after its stem,
# Hugging Face ConvNext / ConvNextV2 atto .. xlarge at 224 and 384, and those models' contiguous stems), measured
# channels-last (calibrate/conv_workspace.py --channels-last-only --hf-convnext), one dtype per process so a run
# stopped by its time limit keeps the dtypes it finished.   OUT=dir bash calibrate/runs/cl_workspace_run.sh
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
models=convnext_tiny,convnext_small,convnext_base,convnext_large
for dt in fp32 bf16 fp16; do
  timeout ${DT_S:-170} python3 conv_workspace.py "$OUT/cl-$dt.json" --models=$models --hf-convnext \
    --channels-last-only --dtypes=$dt 2> "$OUT/cl-$dt.log"
  echo "$dt rc=$? $(tail -1 "$OUT/cl-$dt.log" | cut -c1-150)"
done
for f in "$OUT"/cl-*.json; do gzip -9 "$f"; done
ls -la "$OUT"
