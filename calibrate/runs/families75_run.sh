#!/usr/bin/env bash
# Family set 75 (hyperclovax: held out, predicted in predictions/families75-holdout.json before any device saw it). First
# the device's installed transformers 5.17 hyperclovax files ($OUT/hyperclovax-src.tgz: modeling_hyperclovax.py, which the builder
# followed from this side's /work/src517 copy, and configuration_hyperclovax.py, whose class defaults the importer took),
# then the set.
#   OUT=dir bash calibrate/runs/families75_run.sh SHA75
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/hyperclovax-src"
python3 - "$OUT/hyperclovax-src" <<'PY' || echo "hyperclovax sources not copied"
import os, shutil, sys
import transformers.models.hyperclovax as m
d = os.path.dirname(m.__file__)
for f in ("modeling_hyperclovax.py", "configuration_hyperclovax.py", "modular_hyperclovax.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/hyperclovax-src.tgz" -C "$OUT" hyperclovax-src && rm -rf "$OUT/hyperclovax-src"
TIMEOUT=${T75:-240} bash "$here/holdout_memory.sh" families75 cases/families75-input.jsonl "${1:-}"
