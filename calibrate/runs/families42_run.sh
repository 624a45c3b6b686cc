#!/usr/bin/env bash
# Family set 42 held out (cases/families42-input.jsonl: Llama 3.2 Vision, mllama, trained with 1-2 tiled images a
# sample in bf16 / amp_bf16 / fp32, eager, checkpointing, LoRA on q_proj / v_proj, a text-only step and a text-only
# serving pass, two capped rows; predicted in predictions/families42-holdout.json, written from the modeling file
# before any device saw them).
#   OUT=dir bash calibrate/runs/families42_run.sh <sha256 of the input, as holdout_memory.sh wants it>
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=400 bash "$here/holdout_memory.sh" families42 cases/families42-input.jsonl "${1:-}"
