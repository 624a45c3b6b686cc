#!/usr/bin/env bash
# Family set 61 (ministral: held out, predicted in predictions/families61-holdout.json before any device saw it). First
# the device's installed transformers 5.17 ministral files ($OUT/ministral-src.tgz: modeling_ministral.py, which the builder
# followed from this side's /work/src517 copy, and configuration_ministral.py, whose class defaults the importer took),
# then the set.
#   OUT=dir bash calibrate/runs/families61_run.sh SHA61
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/ministral-src"
python3 - "$OUT/ministral-src" <<'PY' || echo "ministral sources not copied"
import os, shutil, sys
import transformers.models.ministral as m
d = os.path.dirname(m.__file__)
for f in ("modeling_ministral.py", "configuration_ministral.py", "modular_ministral.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/ministral-src.tgz" -C "$OUT" ministral-src && rm -rf "$OUT/ministral-src"
TIMEOUT=${T61:-240} bash "$here/holdout_memory.sh" families61 cases/families61-input.jsonl "${1:-}"
