#!/usr/bin/env bash
# Twentieth session's third call. 1) Family set 26, held out (cases/families26-input.jsonl, predicted in
# predictions/families26-holdout.json before this call), through harness.py. 2) The whole-run allocator stream of
# f23-cnx2-t-ampfp16-b33-acc2-dp (ConvNextV2-T amp fp16: the GRN's forward reduction buffer moved its replayed
# reserved -0.05 -> -2.82 %; is the buffer in the amp run?). 3) The 16-bit channels-last conv workspaces the first two
# calls did not reach (conv_workspace.py, skipping every shape measured).
#   OUT=dir bash calibrate/runs/families27_run.sh SHA_FAMILIES26
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/m; mkdir -p "$R/rec"
(cd "$here"
 echo "${1:-} cases/families26-input.jsonl" | sha256sum -c - || echo "INPUT CHANGED SINCE THE PREDICTIONS"
 timeout ${HOLD_S:-170} python3 harness.py cases/families26-input.jsonl --out "$R/f26.jsonl" \
   --env "$R/env-f26.json" --jobs 8 --mem-budget-gib 120 --timeout $(( ${HOLD_S:-170} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" > "$R/f26.log"; grep -E "summary| ERROR | OOM " "$R/f26.log" | cut -c1-160 | tail -12
 timeout ${REC_S:-100} python3 record_cases_budget.py cases/families26-record-input.jsonl "$R/rec" \
   --jobs 1 --budget-gib 128 --timeout $(( ${REC_S:-100} - 10 )) > "$R/rec-progress.log" 2>&1
 tail -3 "$R/rec-progress.log" | cut -c1-160
 raw=../data/calibration/raw
 skip=$(ls $raw/h200-conv-workspace-cl-*.json.gz | paste -sd,)
 for dt in bf16 fp16; do
   timeout ${DT_S:-110} python3 conv_workspace.py "$R/cl3-$dt.json" \
     --models=convnext_tiny,convnext_small,convnext_base,convnext_large --hf-convnext --channels-last-only \
     --dtypes=$dt --skip=$skip --cl-batches=1,8,16,24,32,64,128 2> "$R/cl3-$dt.log"
   echo "$dt rc=$? $(grep -c done "$R/cl3-$dt.log") sigs"
 done
)
tar czf "$OUT/families27.tgz" -C "$R" .
ls -la "$OUT"
