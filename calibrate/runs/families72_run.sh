#!/usr/bin/env bash
# Family set 72 (exaone_moe: held out, predicted in predictions/families72-holdout.json before any device saw it). First
# the device's installed transformers 5.17 exaone_moe files ($OUT/exaone_moe-src.tgz: modeling_exaone_moe.py, which the builder
# followed from this side's /work/src517 copy, and configuration_exaone_moe.py, whose class defaults the importer took),
# then the set.
#   OUT=dir bash calibrate/runs/families72_run.sh SHA72
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/exaone_moe-src"
python3 - "$OUT/exaone_moe-src" <<'PY' || echo "exaone_moe sources not copied"
import os, shutil, sys
import transformers.models.exaone_moe as m
d = os.path.dirname(m.__file__)
for f in ("modeling_exaone_moe.py", "configuration_exaone_moe.py", "modular_exaone_moe.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/exaone_moe-src.tgz" -C "$OUT" exaone_moe-src && rm -rf "$OUT/exaone_moe-src"
TIMEOUT=${T72:-240} bash "$here/holdout_memory.sh" families72 cases/families72-input.jsonl "${1:-}"
