#!/usr/bin/env bash
# Twenty-first session's third call. 1) Whole-run allocator streams of the two family set 27 rows that missed
# reserved blind (torchvision ConvNeXt-B fp32 b9 -3.46 %, ConvNextV2-B fp32 b11 -2.56 %; both the 128-wide models),
# for calibrate/diff_events.py. 2) The fp32 channels-last convs of ConvNeXt that are not depthwise (the downsampling
# 2x2 convs; Hugging Face's at 224 px have the same shapes) at every batch 1 .. 32, as the depthwise ones were in
# the first call.
#   OUT=dir bash calibrate/runs/families30_run.sh
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R/rec"
(cd "$here"
 timeout ${REC_S:-150} python3 record_cases_budget.py cases/families27-record-input.jsonl "$R/rec" \
   --jobs 2 --budget-gib 120 --timeout $(( ${REC_S:-150} - 10 )) > "$R/rec-progress.log" 2>&1
 tail -5 "$R/rec-progress.log" | cut -c1-160
 raw=../data/calibration/raw
 b=$(seq -s, 1 32),36,40,44,48,56,64,72,80,96,112,128
 timeout ${DT_S:-200} python3 conv_workspace.py "$R/cl6-fp32.json" \
   --models=convnext_tiny,convnext_small,convnext_base,convnext_large --channels-last-only --dtypes=fp32 \
   --cl-batches=$b \
   --skip=$raw/h200-conv-workspace-cl-fp32-dense2.json.gz,$raw/h200-conv-workspace-cl-fp32-dense3.json.gz \
   2> "$R/cl6-fp32.log"
 echo "fp32 rc=$? $(grep -c done "$R/cl6-fp32.log") sigs"
 [ -f "$R/cl6-fp32.json" ] && gzip -9 "$R/cl6-fp32.json"
)
tar czf "$OUT/families30.tgz" -C "$R" .
ls -la "$OUT"
