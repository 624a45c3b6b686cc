#!/usr/bin/env bash
# The thirty-fourth session's third call: whole-run streams, with frames, of the rows the measured patch stems or
# the mllama stream's fixes moved the wrong way (LLaVA-NeXT amp bf16 -2.66 %, Llama 3.2 Vision bf16 with two images
# +3.05 % with the stem's slices as views, DINOv2-L 518 px amp fp16 +2.38 %).
#   OUT=dir bash calibrate/runs/trace34_run.sh
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p "$OUT/rec"
for p in "families39-input:f39-lnx-mis-ampbf16-b2s2400-336x1008-v6" "families42-input:f42-mll-bf16-b2s512-2img" \
         "families18-holdout-input:f18-dinov2l518-ampfp16-b4"; do
  f=${p%%:*}; id=${p#*:}
  timeout 150 python3 record_case_events.py "cases/$f.jsonl" "$id" "$OUT/rec/$id.json.gz" --frames \
    > "/tmp/$id.log" 2>&1 || { echo "$id failed"; tail -3 "/tmp/$id.log"; }
  ls -l "$OUT/rec/$id.json.gz"
done
