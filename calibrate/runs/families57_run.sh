#!/usr/bin/env bash
# Family set 57 (Arcee Trinity, afmoe: held out, predicted in predictions/families57-holdout.json before any
# device saw it). First the device's installed transformers 5.17 afmoe files ($OUT/afmoe-src.tgz:
# modeling_afmoe.py, which the builder followed, and configuration_afmoe.py, whose class defaults the
# importer took, both read here from /work/src517), then the set.
#   OUT=dir bash calibrate/runs/families57_run.sh SHA57
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/afmoe-src"
python3 - "$OUT/afmoe-src" <<'PY' || echo "afmoe sources not copied"
import os, shutil, sys
import transformers.models.afmoe as m
d = os.path.dirname(m.__file__)
for f in ("modeling_afmoe.py", "configuration_afmoe.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/afmoe-src.tgz" -C "$OUT" afmoe-src && rm -rf "$OUT/afmoe-src"
TIMEOUT=${T57:-240} bash "$here/holdout_memory.sh" families57 cases/families57-input.jsonl "${1:-}"
