#!/usr/bin/env bash
# The thirty-third session's family call: sets 51 (Swin V2), 52 (Qwen2-Audio) and 50 (CodeGen), each predicted in
# data/validation/predictions/ before any device saw it, under deadlines that fit one device call, after the
# installed configuration files the helpers lacked (qwen2_audio, codegen, swinv2: $OUT/config-src.tgz).
#   OUT=dir bash calibrate/runs/session33_run.sh SHA50 SHA51 SHA52
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/config-src"
python3 - "$OUT/config-src" <<'PY' || echo "configuration files not copied"
import importlib, os, shutil, sys
for fam in ("qwen2_audio", "codegen", "swinv2"):
    d = os.path.dirname(importlib.import_module("transformers.models." + fam).__file__)
    for f in os.listdir(d):
        if f.startswith("configuration_"):
            shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/config-src.tgz" -C "$OUT" config-src && rm -rf "$OUT/config-src"
cd "$here"
MEM_BUDGET_GIB=70 TIMEOUT=${T51:-100} bash "$here/holdout_memory.sh" families51 cases/families51-input.jsonl "${2:-}"
MEM_BUDGET_GIB=70 TIMEOUT=${T52:-200} bash "$here/holdout_memory.sh" families52 cases/families52-input.jsonl "${3:-}"
MEM_BUDGET_GIB=70 TIMEOUT=${T50:-190} bash "$here/holdout_memory.sh" families50 cases/families50-input.jsonl "${1:-}"
