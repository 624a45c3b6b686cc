#!/usr/bin/env bash
# Family set 73 (cwm: held out, predicted in predictions/families73-holdout.json before any device saw it). First
# the device's installed transformers 5.17 cwm files ($OUT/cwm-src.tgz: modeling_cwm.py, which the builder
# followed from this side's /work/src517 copy, and configuration_cwm.py, whose class defaults the importer took),
# then the set.
#   OUT=dir bash calibrate/runs/families73_run.sh SHA73
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/cwm-src"
python3 - "$OUT/cwm-src" <<'PY' || echo "cwm sources not copied"
import os, shutil, sys
import transformers.models.cwm as m
d = os.path.dirname(m.__file__)
for f in ("modeling_cwm.py", "configuration_cwm.py", "modular_cwm.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/cwm-src.tgz" -C "$OUT" cwm-src && rm -rf "$OUT/cwm-src"
TIMEOUT=${T73:-240} bash "$here/holdout_memory.sh" families73 cases/families73-input.jsonl "${1:-}"
