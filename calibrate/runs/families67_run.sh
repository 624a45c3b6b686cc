#!/usr/bin/env bash
# Family set 67 (MiniCPM3, minicpm3: held out, predicted in predictions/families67-holdout.json before any device
# saw it). First the device's installed transformers 5.17 minicpm3 files ($OUT/minicpm3-src.tgz:
# modeling_minicpm3.py, which the builder followed, and configuration_minicpm3.py, whose class defaults the
# importer took), then the set.
#   OUT=dir bash calibrate/runs/families67_run.sh SHA67
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/minicpm3-src"
python3 - "$OUT/minicpm3-src" <<'PY' || echo "minicpm3 sources not copied"
import os, shutil, sys
import transformers.models.minicpm3 as m
d = os.path.dirname(m.__file__)
for f in ("modeling_minicpm3.py", "configuration_minicpm3.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/minicpm3-src.tgz" -C "$OUT" minicpm3-src && rm -rf "$OUT/minicpm3-src"
TIMEOUT=${T67:-300} bash "$here/holdout_memory.sh" families67 cases/families67-input.jsonl "${1:-}"
