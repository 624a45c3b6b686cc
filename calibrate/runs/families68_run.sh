#!/usr/bin/env bash
# Family set 68 (LongCat-Flash, longcat_flash: held out, predicted in predictions/families68-holdout.json before any device
# saw it). First the device's installed transformers 5.17 longcat_flash files ($OUT/longcat_flash-src.tgz:
# modeling_longcat_flash.py, which the builder followed, and configuration_longcat_flash.py, whose class defaults the
# importer took), then the set.
#   OUT=dir bash calibrate/runs/families68_run.sh SHA68
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/longcat_flash-src"
python3 - "$OUT/longcat_flash-src" <<'PY' || echo "longcat_flash sources not copied"
import os, shutil, sys
import transformers.models.longcat_flash as m
d = os.path.dirname(m.__file__)
for f in ("modeling_longcat_flash.py", "configuration_longcat_flash.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/longcat_flash-src.tgz" -C "$OUT" longcat_flash-src && rm -rf "$OUT/longcat_flash-src"
TIMEOUT=${T68:-300} bash "$here/holdout_memory.sh" families68 cases/families68-input.jsonl "${1:-}"
