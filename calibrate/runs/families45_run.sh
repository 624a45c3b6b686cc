#!/usr/bin/env bash
# For the second device call of the twenty-ninth session: the held-out family sets 40 (InternVL), 42 (Llama 3.2
# Vision, mllama) and 43 (Gemma 3n), each predicted before any device saw it, one after another with a 50 GiB pool,
# while conv_workspace.py measures the SegFormer convs the first call's run did not reach (--skip: the shapes that
# run measured; its largest remaining shapes need under 4 GiB).
#   OUT=dir bash calibrate/runs/families45_run.sh SHA40 SHA42 SHA43
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
timeout 400 python3 conv_workspace.py "$OUT/h100-conv-workspace-segformer2.json" --hf-segformer --dtypes=bf16,fp32 \
  --skip=../data/calibration/raw/h100-conv-workspace-segformer.json.gz > "$OUT/conv_ws2.log" 2>&1 &
ws=$!
export MEM_BUDGET_GIB=50
[ -f cases/families40-input.jsonl ] && TIMEOUT=${T40:-150} bash "$here/holdout_memory.sh" families40 cases/families40-input.jsonl "${1:-}"
[ -f cases/families42-input.jsonl ] && TIMEOUT=${T42:-150} bash "$here/holdout_memory.sh" families42 cases/families42-input.jsonl "${2:-}"
[ -f cases/families43-input.jsonl ] && TIMEOUT=${T43:-150} bash "$here/holdout_memory.sh" families43 cases/families43-input.jsonl "${3:-}"
kill $ws 2>/dev/null; wait $ws; echo "conv_workspace rc $?"; tail -1 "$OUT/conv_ws2.log"
