#!/usr/bin/env bash
# Held-out set 53 (cases/nocache53-input.jsonl: generate() with a config's use_cache false, replayed without a KV
# cache; predicted in data/validation/predictions/nocache53-holdout.json before any device saw it).
#   OUT=dir bash calibrate/runs/nocache53_run.sh SHA256     ($OUT/nocache53.tgz)
here=$(cd "$(dirname "$0")/.." && pwd)
MEM_BUDGET_GIB=${MEM_BUDGET_GIB:-60} TIMEOUT=${TIMEOUT:-150} bash "$here/holdout_memory.sh" nocache53 cases/nocache53-input.jsonl "${1:-}"
