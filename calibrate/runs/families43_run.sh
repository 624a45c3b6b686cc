#!/usr/bin/env bash
# Family set 43 held out (cases/families43-input.jsonl: Gemma 3n's text decoder, gemma3n_text, with AltUp, LAuReL,
# per-layer inputs, activation sparsity and KV sharing, in bf16 / amp_bf16 / fp32, eager, checkpointed, LoRA, the
# E4B widths, the whole E2B decoder served with generate(), two capped rows; predicted in
# predictions/families43-holdout.json, written from the modeling file before any device saw them).
#   OUT=dir bash calibrate/runs/families43_run.sh <sha256 of the input, as holdout_memory.sh wants it>
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=540 bash "$here/holdout_memory.sh" families43 cases/families43-input.jsonl "${1:-}"
