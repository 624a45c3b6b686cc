#!/usr/bin/env bash
# Family set 62 (Granite SWA, granite_swa: held out, predicted in predictions/families62-holdout.json before any device saw
# it). First the device's installed transformers 5.17 granite_swa files ($OUT/granite_swa-src.tgz: modeling_granite_swa.py, which
# the builder followed from this side's /work/src517 copy, and configuration_granite_swa.py, whose class defaults the
# importer took), then the set (eager rows only: the class has no SDPA path).
#   OUT=dir bash calibrate/runs/families62_run.sh SHA62
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/granite_swa-src"
python3 - "$OUT/granite_swa-src" <<'PY' || echo "granite_swa sources not copied"
import os, shutil, sys
import transformers.models.granite_swa as m
d = os.path.dirname(m.__file__)
for f in ("modeling_granite_swa.py", "configuration_granite_swa.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/granite_swa-src.tgz" -C "$OUT" granite_swa-src && rm -rf "$OUT/granite_swa-src"
TIMEOUT=${T62:-200} bash "$here/holdout_memory.sh" families62 cases/families62-input.jsonl "${1:-}"
