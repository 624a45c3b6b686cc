#!/usr/bin/env bash
# Family set 70 (Laguna, laguna: held out, predicted in predictions/families70-holdout.json before any device
# saw it). First the device's installed transformers 5.17 laguna files ($OUT/laguna-src.tgz:
# modeling_laguna.py, which the builder followed, and configuration_laguna.py, whose class defaults the
# importer took), then the set.
#   OUT=dir bash calibrate/runs/families70_run.sh SHA70
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/laguna-src"
python3 - "$OUT/laguna-src" <<'PY' || echo "laguna sources not copied"
import os, shutil, sys
import transformers.models.laguna as m
d = os.path.dirname(m.__file__)
for f in ("modeling_laguna.py", "configuration_laguna.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/laguna-src.tgz" -C "$OUT" laguna-src && rm -rf "$OUT/laguna-src"
TIMEOUT=${T70:-300} bash "$here/holdout_memory.sh" families70 cases/families70-input.jsonl "${1:-}"
