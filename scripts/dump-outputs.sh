#!/usr/bin/env bash
# Dumps the full output of a memplan binary over a broad, fixed set of inputs, one file per command, so a
# change meant to leave every answer alone (a speed-up, a refactor) can be checked byte for byte:
#
#   scripts/dump-outputs.sh BUILD_OLD/cli/memplan /tmp/out-old
#   scripts/dump-outputs.sh BUILD_NEW/cli/memplan /tmp/out-new
#   diff -r /tmp/out-old /tmp/out-new && echo identical
#
# Covered: every case of data/validation/*.jsonl through `validate --json --phases` (training and inference,
# memory caps, expandable segments), one case's replayed allocator events (--events-out), and `estimate --json`
# of zoo models in training and inference, without and with a cap (the capped allocator replay), with
# expandable segments, grad accumulation, checkpointing, LoRA, per-layer tables and a timeline (the reserved
# curve); `dynamic --json` (steps of different shapes sharing one allocator). Exit codes are recorded too.
set -uo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 MEMPLAN_BINARY OUT_DIR" >&2
  exit 2
fi
B=$(realpath "$1")
mkdir -p "$2"
OUT=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"  # the inputs (data/validation) of the tree the script sits in

run() {  # run NAME ARGS...: stdout to NAME.out, stderr to NAME.err, exit code appended to NAME.rc
  local name=$1
  shift
  "$B" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  echo $? >"$OUT/$name.rc"
}

for f in data/validation/*.jsonl; do
  run "validate-$(basename "$f" .jsonl)" validate --json --phases "$f"
done
run events-gpt2 validate data/validation/h200-public-cases.jsonl --only "$(head -1 data/validation/h200-public-cases.jsonl |
  sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')" --events-out "$OUT/events-gpt2.txt"

i=0
est() {  # est ARGS...: one estimate --json
  i=$((i + 1))
  run "$(printf 'estimate-%02d' $i)" estimate --json --quiet "$@"
}
T="--precision amp_bf16 --gpu h200"
est --model llama-2-70b --batch-size 1 --seq-len 4096 --precision bf16 --grad-checkpointing all
est --model llama-2-7b --batch-size 2 --seq-len 2048 $T
est --model llama-2-7b --batch-size 2 --seq-len 2048 $T --gpu-memory-gib 40
est --model llama-2-7b --batch-size 2 --seq-len 2048 $T --gpu-memory-gib 40 --expandable-segments
est --model llama-3.1-8b --batch-size 4 --seq-len 1024 --precision bf16 --expandable-segments --gpu h200
est --model gpt2 --batch-size 8 --seq-len 1024 --precision fp32 --gpu h200 --per-layer
est --model gpt2-medium --batch-size 8 --seq-len 1024 --precision amp_fp16 --gpu-memory-gib 12
est --model bert-base --batch-size 32 --seq-len 512 $T --grad-accum-steps 2
est --model mistral-7b --batch-size 1 --seq-len 4096 $T --grad-checkpointing 0,2,4 --optimizer-impl fused
est --model qwen2.5-0.5b --batch-size 4 --seq-len 2048 $T --optimizer adafactor
est --model qwen3-30b-a3b --batch-size 1 --seq-len 2048 --precision bf16 --grad-checkpointing all --gpu h200
est --model gemma-2-2b --batch-size 2 --seq-len 2048 $T --attn eager
est --model phi-3-mini --batch-size 2 --seq-len 2048 $T --lora-r 16 --lora-targets all-linear
est --model llama-2-7b --batch-size 1 --seq-len 2048 --precision bf16 --lora-r 8 --quantize-base nf4 --gpu rtx-4090
est --model resnet50 --batch-size 64 --image-size 224 $T
est --model resnet50 --batch-size 64 --image-size 224 --precision fp32 --gpu-memory-gib 8 --expandable-segments
est --model vit_b_16 --batch-size 32 --image-size 224 $T --optimizer sgd_momentum
est --model convnext_tiny --batch-size 32 --image-size 160 --precision amp_fp16 --gpu h200
est --model flan-t5-xl --batch-size 2 --seq-len 512 --precision bf16 --gpu h200
est --model llama-2-7b --mode inference --batch-size 8 --seq-len 2048 --generate-tokens 32 --precision bf16 --gpu h200
est --model llama-3.1-8b --mode inference --batch-size 4 --seq-len 4096 --generate-tokens 16 --precision bf16 --gpu-memory-gib 24
est --model qwen2.5-7b --mode inference --batch-size 2 --seq-len 8192 --generate-tokens 8 --precision bf16 --expandable-segments
est --model gpt2 --mode inference --batch-size 16 --seq-len 512 --generate-tokens 64 --precision fp32
est --model flan-t5-xl --mode inference --batch-size 4 --seq-len 512 --generate-tokens 16 --precision bf16
est --model deepseek-v2-lite --batch-size 1 --seq-len 2048 --precision bf16 --grad-checkpointing all --gpu-memory-gib 70

run timeline estimate --quiet --model gpt2 --batch-size 8 --seq-len 1024 $T --timeline "$OUT/timeline-gpt2.svg"
run dynamic-1 dynamic --json --quiet --model gpt2 $T --batch-size 8 --seq-len-sample 128:1024:24:7
run dynamic-2 dynamic --json --quiet --model llama-3.2-1b $T --batch-size 4 --seq-len-sample 256:2048:12:3 \
  --expandable-segments
run fit-1 fit --json --quiet --model llama-2-7b --gpu rtx-4090 --precision amp_bf16 --batch-size 4
exit 0
