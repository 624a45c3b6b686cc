#!/usr/bin/env bash
# Family set 58 (DeepSeek-V3.2, deepseek_v32: held out, predicted in predictions/families58-holdout.json before any
# device saw it). First the device's installed transformers 5.17 deepseek_v32 files ($OUT/deepseek_v32-src.tgz:
# modeling_deepseek_v32.py, which the builder followed, and configuration_deepseek_v32.py, whose class defaults the
# importer took), then the set.
#   OUT=dir bash calibrate/runs/families58_run.sh SHA58
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/deepseek_v32-src"
python3 - "$OUT/deepseek_v32-src" <<'PY' || echo "deepseek_v32 sources not copied"
import os, shutil, sys
import transformers.models.deepseek_v32 as m
d = os.path.dirname(m.__file__)
for f in ("modeling_deepseek_v32.py", "configuration_deepseek_v32.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/deepseek_v32-src.tgz" -C "$OUT" deepseek_v32-src && rm -rf "$OUT/deepseek_v32-src"
TIMEOUT=${T58:-300} bash "$here/holdout_memory.sh" families58 cases/families58-input.jsonl "${1:-}"
