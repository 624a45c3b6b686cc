#!/usr/bin/env bash
# Family set 40 held out (cases/families40-input.jsonl: InternVL, internvl, InternVL3-1B / 2B shapes with images of
# 1 to 7 tiles (case key image_tiles), sdpa and one eager row, fp32 / amp bf16 / bf16, LoRA on the towers' q_proj /
# v_proj, checkpointing, two images a sample, a text-only step and a text-only serving pass, two capped rows;
# predicted in predictions/families40-holdout.json, written from the 5.17 modeling file before any device saw them).
#   OUT=dir bash calibrate/runs/families40_run.sh <sha256 of the input, as holdout_memory.sh wants it>
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=240 bash "$here/holdout_memory.sh" families40 cases/families40-input.jsonl "${1:-}"
