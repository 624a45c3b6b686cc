#!/usr/bin/env bash
# Family set 65 (Solar Open, solar_open: held out, predicted in predictions/families65-holdout.json before any device
# saw it). First the device's installed transformers 5.17 solar_open files ($OUT/solar_open-src.tgz:
# modeling_solar_open.py, which the builder followed, and configuration_solar_open.py, whose class defaults the
# importer took), then the set.
#   OUT=dir bash calibrate/runs/families65_run.sh SHA65
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/solar_open-src"
python3 - "$OUT/solar_open-src" <<'PY' || echo "solar_open sources not copied"
import os, shutil, sys
import transformers.models.solar_open as m
d = os.path.dirname(m.__file__)
for f in ("modeling_solar_open.py", "configuration_solar_open.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/solar_open-src.tgz" -C "$OUT" solar_open-src && rm -rf "$OUT/solar_open-src"
TIMEOUT=${T65:-300} bash "$here/holdout_memory.sh" families65 cases/families65-input.jsonl "${1:-}"
