#!/usr/bin/env bash
# Family set 74 (jais2: held out, predicted in predictions/families74-holdout.json before any device saw it). First
# the device's installed transformers 5.17 jais2 files ($OUT/jais2-src.tgz: modeling_jais2.py, which the builder
# followed from this side's /work/src517 copy, and configuration_jais2.py, whose class defaults the importer took),
# then the set.
#   OUT=dir bash calibrate/runs/families74_run.sh SHA74
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/jais2-src"
python3 - "$OUT/jais2-src" <<'PY' || echo "jais2 sources not copied"
import os, shutil, sys
import transformers.models.jais2 as m
d = os.path.dirname(m.__file__)
for f in ("modeling_jais2.py", "configuration_jais2.py", "modular_jais2.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/jais2-src.tgz" -C "$OUT" jais2-src && rm -rf "$OUT/jais2-src"
TIMEOUT=${T74:-240} bash "$here/holdout_memory.sh" families74 cases/families74-input.jsonl "${1:-}"
