#!/usr/bin/env bash
# Family set 60 (cohere2_moe: held out, predicted in predictions/families60-holdout.json before any device saw it). First
# the device's installed transformers 5.17 cohere2_moe files ($OUT/cohere2_moe-src.tgz: modeling_cohere2_moe.py, which the builder
# followed from this side's /work/src517 copy, and configuration_cohere2_moe.py, whose class defaults the importer took),
# then the set.
#   OUT=dir bash calibrate/runs/families60_run.sh SHA60
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/cohere2_moe-src"
python3 - "$OUT/cohere2_moe-src" <<'PY' || echo "cohere2_moe sources not copied"
import os, shutil, sys
import transformers.models.cohere2_moe as m
d = os.path.dirname(m.__file__)
for f in ("modeling_cohere2_moe.py", "configuration_cohere2_moe.py", "modular_cohere2_moe.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/cohere2_moe-src.tgz" -C "$OUT" cohere2_moe-src && rm -rf "$OUT/cohere2_moe-src"
TIMEOUT=${T60:-240} bash "$here/holdout_memory.sh" families60 cases/families60-input.jsonl "${1:-}"
