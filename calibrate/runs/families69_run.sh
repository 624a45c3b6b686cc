#!/usr/bin/env bash
# Family set 69 (MiMo-V2-Flash, mimo_v2_flash: held out, predicted in predictions/families69-holdout.json before any device
# saw it). First the device's installed transformers 5.17 mimo_v2_flash files ($OUT/mimo_v2_flash-src.tgz:
# modeling_mimo_v2_flash.py, which the builder followed, and configuration_mimo_v2_flash.py, whose class defaults the
# importer took), then the set.
#   OUT=dir bash calibrate/runs/families69_run.sh SHA69
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/mimo_v2_flash-src"
python3 - "$OUT/mimo_v2_flash-src" <<'PY' || echo "mimo_v2_flash sources not copied"
import os, shutil, sys
import transformers.models.mimo_v2_flash as m
d = os.path.dirname(m.__file__)
for f in ("modeling_mimo_v2_flash.py", "configuration_mimo_v2_flash.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/mimo_v2_flash-src.tgz" -C "$OUT" mimo_v2_flash-src && rm -rf "$OUT/mimo_v2_flash-src"
TIMEOUT=${T69:-300} bash "$here/holdout_memory.sh" families69 cases/families69-input.jsonl "${1:-}"
