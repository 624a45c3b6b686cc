#!/usr/bin/env bash
# Family set 39 held out (cases/families39-input.jsonl: LLaVA-NeXT, llava_next, with anyres images of several sizes,
# LoRA on the towers' q_proj / v_proj, checkpointing, a text-only step and a text-only serving pass, two capped rows;
# predicted in predictions/families39-holdout.json, written from the modeling file before any device saw them).
#   OUT=dir bash calibrate/runs/families39_run.sh <sha256 of the input, as holdout_memory.sh wants it>
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=200 bash "$here/holdout_memory.sh" families39 cases/families39-input.jsonl "${1:-}"
