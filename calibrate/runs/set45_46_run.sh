#!/usr/bin/env bash
# The thirty-first session's family call: set 45 (LLaVA-OneVision, with two whole-run recordings and the installed
# modeling file: runs/set45_run.sh) and then set 46 (ERNIE, cases/families46-input.jsonl, predicted in
# predictions/families46-holdout.json before any device saw it; BERT-base widths, seconds a row).
#   OUT=dir bash calibrate/runs/set45_46_run.sh SHA45 SHA46     ($OUT/families45.tgz, $OUT/rec45b.tgz, $OUT/families46.tgz)
here=$(cd "$(dirname "$0")/.." && pwd)
T45=${T45:-230} bash "$here/runs/set45_run.sh" "${1:-}"
MEM_BUDGET_GIB=60 TIMEOUT=${T46:-100} bash "$here/holdout_memory.sh" families46 cases/families46-input.jsonl "${2:-}"
