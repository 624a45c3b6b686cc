#!/usr/bin/env bash
# Family set 64 (GLM-5, glm_moe_dsa: held out, predicted in predictions/families64-holdout.json before any device saw
# it). First the device's installed transformers 5.17 glm_moe_dsa files ($OUT/glm_moe_dsa-src.tgz:
# modeling_glm_moe_dsa.py, which the builder followed, and configuration_glm_moe_dsa.py, whose class defaults the
# importer took), then the set.
#   OUT=dir bash calibrate/runs/families64_run.sh SHA64
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/glm_moe_dsa-src"
python3 - "$OUT/glm_moe_dsa-src" <<'PY' || echo "glm_moe_dsa sources not copied"
import os, shutil, sys
import transformers.models.glm_moe_dsa as m
d = os.path.dirname(m.__file__)
for f in ("modeling_glm_moe_dsa.py", "configuration_glm_moe_dsa.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/glm_moe_dsa-src.tgz" -C "$OUT" glm_moe_dsa-src && rm -rf "$OUT/glm_moe_dsa-src"
TIMEOUT=${T64:-300} bash "$here/holdout_memory.sh" families64 cases/families64-input.jsonl "${1:-}"
