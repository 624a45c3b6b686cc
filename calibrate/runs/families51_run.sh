#!/usr/bin/env bash
# Family set 51 held out (cases/families51-input.jsonl: Swin V2, swinv2, Swinv2ForImageClassification at the
# swinv2-tiny / small / base-window16 / large-window12-192-22k widths, eager only (no SDPA class), amp bf16 / bf16 /
# fp32, a 224 px row whose stages pad to the window, stage checkpointing, LoRA on query / value, one serving forward,
# two capped rows; predicted in predictions/families51-holdout.json, written from the installed 5.17 modeling file
# before any device saw them).
#   OUT=dir bash calibrate/runs/families51_run.sh <sha256 of the input, as holdout_memory.sh wants it>
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=${T51:-240} bash "$here/holdout_memory.sh" families51 cases/families51-input.jsonl "${1:-}"
