#!/usr/bin/env bash
# Family set 71 (hy_v3: held out, predicted in predictions/families71-holdout.json before any device saw it). First
# the device's installed transformers 5.17 hy_v3 files ($OUT/hy_v3-src.tgz: modeling_hy_v3.py, which the builder
# followed from this side's /work/src517 copy, and configuration_hy_v3.py, whose class defaults the importer took),
# then the set.
#   OUT=dir bash calibrate/runs/families71_run.sh SHA71
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/hy_v3-src"
python3 - "$OUT/hy_v3-src" <<'PY' || echo "hy_v3 sources not copied"
import os, shutil, sys
import transformers.models.hy_v3 as m
d = os.path.dirname(m.__file__)
for f in ("modeling_hy_v3.py", "configuration_hy_v3.py", "modular_hy_v3.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/hy_v3-src.tgz" -C "$OUT" hy_v3-src && rm -rf "$OUT/hy_v3-src"
TIMEOUT=${T71:-240} bash "$here/holdout_memory.sh" families71 cases/families71-input.jsonl "${1:-}"
