#!/usr/bin/env bash
# For a device call of the twenty-ninth session: SegFormer on transformers 5.17's defaults.
#   1. conv_workspace.py --hf-segformer: the workspaces cuDNN asks for in SegFormer's convs (the decode head's
#      channels-last 1x1 convs, the sequence-reduction convs, Mix-FFN's channels-last depthwise 3x3, the patch
#      embeddings), bf16 and fp32 (set 37's fp32 rows and the pure-bf16 row pointed at them), in the background
#      while
#   2. whole-run allocator streams of set 37's two fp32 rows (reserved +15.5 % / +27 %, not traced) are recorded;
#   3. once both are done (the held-out set must not share the GPU's memory with them), family set 44 held out (cases/families44-input.jsonl, predicted in predictions/families44-holdout.json before
#      any device saw it).
#   OUT=dir bash calibrate/runs/families44_run.sh SHA44
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
timeout 200 python3 conv_workspace.py "$OUT/h100-conv-workspace-segformer.json" --hf-segformer --dtypes=bf16,fp32 \
  > "$OUT/conv_ws.log" 2>&1 &
ws=$!
mkdir -p "$OUT/rec"
grep '"f37-segmitb2-cls-fp32-sgdmom-b32"\|"f37-segb0-city1024-fp32-adamw-b3"' \
  ../data/validation/h100-families.jsonl > "$OUT/rec/f37-fp32.jsonl"
for id in f37-segmitb2-cls-fp32-sgdmom-b32 f37-segb0-city1024-fp32-adamw-b3; do
  timeout 100 python3 record_case_events.py "$OUT/rec/f37-fp32.jsonl" "$id" "$OUT/rec/$id.json.gz" --frames \
    > "$OUT/rec/$id.log" 2>&1 || echo "record $id failed"
done
rm -f "$OUT/rec/f37-fp32.jsonl"
wait $ws; echo "conv_workspace rc $?"; tail -2 "$OUT/conv_ws.log"
TIMEOUT=200 bash "$here/holdout_memory.sh" families44 cases/families44-input.jsonl "${1:-}"
