#!/usr/bin/env bash
# For the second device call of the twenty-ninth session: the held-out family sets 40 (InternVL), 42 (Llama 3.2
# Vision, mllama) and 43 (Gemma 3n), each predicted before any device saw it, one after another with a 50 GiB pool,
# while conv_workspace.py measures the SegFormer convs the first call's run did not reach (--skip: the shapes that
# run measured; its largest remaining shapes need under 4 GiB).
#   OUT=dir bash calibrate/runs/families45_run.sh SHA40 SHA42 SHA43
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# First SegFormer's convs at 224 px (the MiT ImageNet classifier) at batches 24 .. 128, which the first run's 1 .. 16
# did not reach; then the rest of the first run's list.
(timeout 120 python3 conv_workspace.py "$OUT/h100-conv-workspace-segformer224.json" --hf-segformer --dtypes=bf16,fp32 \
   --seg-sizes=224 --seg-batches=24,32,48,64,96,128 > "$OUT/conv_ws224.log" 2>&1
 timeout 330 python3 conv_workspace.py "$OUT/h100-conv-workspace-segformer2.json" --hf-segformer --dtypes=bf16,fp32 \
   --skip=../data/calibration/raw/h100-conv-workspace-segformer.json.gz > "$OUT/conv_ws2.log" 2>&1) &
ws=$!
# and the whole-run streams of set 44's two reserved misses (the checkpointed city1024 row +2.74 %, amp_fp16 -0.71 %),
# one after the other, beside the sets (each under 9 GiB).
mkdir -p "$OUT/rec"
(grep '"f44-segb2-city1024-ampbf16-sgdmom-b2-sdpa-ckpt"\|"f44-segb1-ade640-ampfp16-adamw-b5-sdpa"' \
   ../data/validation/h100-families.jsonl > "$OUT/rec/f44.jsonl"
 for id in f44-segb2-city1024-ampbf16-sgdmom-b2-sdpa-ckpt f44-segb1-ade640-ampfp16-adamw-b5-sdpa; do
   timeout 120 python3 record_case_events.py "$OUT/rec/f44.jsonl" "$id" "$OUT/rec/$id.json.gz" > "$OUT/rec/$id.log" 2>&1
 done; rm -f "$OUT/rec/f44.jsonl") &
rec=$!
export MEM_BUDGET_GIB=50
# Set 42's models (2.4B parameters, built on the CPU and moved) first; set 43 (Gemma 3n's 262144 x 256-per-layer
# embeddings) only with RUN43=1 (its own call: runs/families43_run.sh).
TIMEOUT=${T42:-300} bash "$here/holdout_memory.sh" families42 cases/families42-input.jsonl "${2:-}"
TIMEOUT=${T40:-200} bash "$here/holdout_memory.sh" families40 cases/families40-input.jsonl "${1:-}"
[ "${RUN43:-0}" = 1 ] && TIMEOUT=${T43:-150} bash "$here/holdout_memory.sh" families43 cases/families43-input.jsonl "${3:-}"
wait $rec
wait $ws; echo "conv_workspace rc $?"; tail -1 "$OUT/conv_ws224.log" "$OUT/conv_ws2.log"
tar czf "$OUT/conv_ws_logs.tgz" -C "$OUT" conv_ws224.log conv_ws2.log && rm -f "$OUT"/conv_ws224.log "$OUT"/conv_ws2.log
tar czf "$OUT/rec45.tgz" -C "$OUT" rec && rm -rf "$OUT/rec"  # few files come back from a call
