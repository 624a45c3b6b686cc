#!/usr/bin/env bash
# Family set 66 (DeepSeek-V4, deepseek_v4: held out, predicted in predictions/families66-holdout.json before any
# device saw it). First the device's installed transformers 5.17 deepseek_v4 files ($OUT/deepseek_v4-src.tgz:
# modeling_deepseek_v4.py, which the builder followed, and configuration_deepseek_v4.py, whose class defaults the
# importer took), then the set.
#   OUT=dir bash calibrate/runs/families66_run.sh SHA66
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/deepseek_v4-src"
python3 - "$OUT/deepseek_v4-src" <<'PY' || echo "deepseek_v4 sources not copied"
import os, shutil, sys
import transformers.models.deepseek_v4 as m
d = os.path.dirname(m.__file__)
for f in ("modeling_deepseek_v4.py", "configuration_deepseek_v4.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/deepseek_v4-src.tgz" -C "$OUT" deepseek_v4-src && rm -rf "$OUT/deepseek_v4-src"
TIMEOUT=${T66:-300} bash "$here/holdout_memory.sh" families66 cases/families66-input.jsonl "${1:-}"
