#!/usr/bin/env bash
# Family set 52 held out (cases/families52-input.jsonl: Qwen2-Audio, qwen2_audio, trained with one or two 30 s clips a
# sample (amp_bf16, bf16 eager, checkpointed, LoRA on q_proj / v_proj, fp32), a text-only step, a text-only serving
# pass with generate(), two capped rows; predicted in predictions/families52-holdout.json, written from the modeling
# file before any device saw them).
#   OUT=dir bash calibrate/runs/families52_run.sh <sha256 of the input, as holdout_memory.sh wants it>
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=200 bash "$here/holdout_memory.sh" families52 cases/families52-input.jsonl "${1:-}"
