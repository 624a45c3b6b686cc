#!/usr/bin/env bash
# Family set 54 (NanoChat, nanochat: held out, predicted in predictions/families54-holdout.json before any device saw
# it). First the device's installed transformers 5.17 nanochat files ($OUT/nanochat-src.tgz: modeling_nanochat.py,
# which the builder followed from this side's /work/src517 copy, and configuration_nanochat.py, whose class defaults
# the importer took), then the set.
#   OUT=dir bash calibrate/runs/families54_run.sh SHA54
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/nanochat-src"
python3 - "$OUT/nanochat-src" <<'PY' || echo "nanochat sources not copied"
import os, shutil, sys
import transformers.models.nanochat as m
d = os.path.dirname(m.__file__)
for f in ("modeling_nanochat.py", "configuration_nanochat.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/nanochat-src.tgz" -C "$OUT" nanochat-src && rm -rf "$OUT/nanochat-src"
TIMEOUT=${T54:-200} bash "$here/holdout_memory.sh" families54 cases/families54-input.jsonl "${1:-}"
