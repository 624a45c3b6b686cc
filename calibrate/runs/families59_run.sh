#!/usr/bin/env bash
# Family set 59 (T5Gemma, t5gemma: held out, predicted in predictions/families59-holdout.json before any device saw
# it). First the device's installed transformers 5.17 t5gemma files ($OUT/t5gemma-src.tgz: modeling_t5gemma.py,
# which the builder followed, and configuration_t5gemma.py, whose class defaults the importer took), then the set.
#   OUT=dir bash calibrate/runs/families59_run.sh SHA59
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/t5gemma-src"
python3 - "$OUT/t5gemma-src" <<'PY' || echo "t5gemma sources not copied"
import os, shutil, sys
import transformers.models.t5gemma as m
d = os.path.dirname(m.__file__)
for f in ("modeling_t5gemma.py", "configuration_t5gemma.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/t5gemma-src.tgz" -C "$OUT" t5gemma-src && rm -rf "$OUT/t5gemma-src"
TIMEOUT=${T59:-200} bash "$here/holdout_memory.sh" families59 cases/families59-input.jsonl "${1:-}"
