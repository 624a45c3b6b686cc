#!/usr/bin/env bash
# Family set 50 (CodeGen, codegen: held out, predicted in predictions/families50-holdout.json before any device saw
# it). First the device's installed transformers 5.17 codegen files ($OUT/codegen-src.tgz: modeling_codegen.py, which
# the builder followed, and configuration_codegen.py, whose class defaults the importer took from the 4.x-era copy
# because the 5.17 file was not on this side), then the set.
#   OUT=dir bash calibrate/runs/families50_run.sh SHA50
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/codegen-src"
python3 - "$OUT/codegen-src" <<'PY' || echo "codegen sources not copied"
import os, shutil, sys
import transformers.models.codegen as m
d = os.path.dirname(m.__file__)
for f in ("modeling_codegen.py", "configuration_codegen.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/codegen-src.tgz" -C "$OUT" codegen-src && rm -rf "$OUT/codegen-src"
TIMEOUT=${T50:-200} bash "$here/holdout_memory.sh" families50 cases/families50-input.jsonl "${1:-}"
