#!/usr/bin/env bash
# Family set 56 (GLM-4.7-Flash, glm4_moe_lite: held out, predicted in predictions/families56-holdout.json before any
# device saw it). First the device's installed transformers 5.17 glm4_moe_lite files ($OUT/glm4_moe_lite-src.tgz:
# modeling_glm4_moe_lite.py, which the builder followed, and configuration_glm4_moe_lite.py, whose class defaults the
# importer took, both read here from /work/src517), then the set.
#   OUT=dir bash calibrate/runs/families56_run.sh SHA56
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/glm4_moe_lite-src"
python3 - "$OUT/glm4_moe_lite-src" <<'PY' || echo "glm4_moe_lite sources not copied"
import os, shutil, sys
import transformers.models.glm4_moe_lite as m
d = os.path.dirname(m.__file__)
for f in ("modeling_glm4_moe_lite.py", "configuration_glm4_moe_lite.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/glm4_moe_lite-src.tgz" -C "$OUT" glm4_moe_lite-src && rm -rf "$OUT/glm4_moe_lite-src"
TIMEOUT=${T56:-240} bash "$here/holdout_memory.sh" families56 cases/families56-input.jsonl "${1:-}"
