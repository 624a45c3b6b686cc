#!/usr/bin/env bash
# Family set 63 (Granite MoE SWA, granitemoe_swa: held out, predicted in predictions/families63-holdout.json before any device saw
# it). First the device's installed transformers 5.17 granitemoe_swa files ($OUT/granitemoe_swa-src.tgz: modeling_granitemoe_swa.py, which
# the builder followed from this side's /work/src517 copy, and configuration_granitemoe_swa.py, whose class defaults the
# importer took), then the set (eager rows only: the class has no SDPA path).
#   OUT=dir bash calibrate/runs/families63_run.sh SHA63
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/granitemoe_swa-src"
python3 - "$OUT/granitemoe_swa-src" <<'PY' || echo "granitemoe_swa sources not copied"
import os, shutil, sys
import transformers.models.granitemoe_swa as m
d = os.path.dirname(m.__file__)
for f in ("modeling_granitemoe_swa.py", "configuration_granitemoe_swa.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/granitemoe_swa-src.tgz" -C "$OUT" granitemoe_swa-src && rm -rf "$OUT/granitemoe_swa-src"
TIMEOUT=${T63:-200} bash "$here/holdout_memory.sh" families63 cases/families63-input.jsonl "${1:-}"
