#!/usr/bin/env bash
# Family set 55 (VaultGemma, vaultgemma: held out, predicted in predictions/families55-holdout.json before any device
# saw it). First the device's installed transformers 5.17 vaultgemma files ($OUT/vaultgemma-src.tgz:
# modeling_vaultgemma.py, which the builder followed from this side's /work/src517 copy, and
# configuration_vaultgemma.py, whose class defaults the importer took), then the set.
#   OUT=dir bash calibrate/runs/families55_run.sh SHA55
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/vaultgemma-src"
python3 - "$OUT/vaultgemma-src" <<'PY' || echo "vaultgemma sources not copied"
import os, shutil, sys
import transformers.models.vaultgemma as m
d = os.path.dirname(m.__file__)
for f in ("modeling_vaultgemma.py", "configuration_vaultgemma.py"):
    if os.path.exists(os.path.join(d, f)):
        shutil.copy(os.path.join(d, f), sys.argv[1])
PY
tar czf "$OUT/vaultgemma-src.tgz" -C "$OUT" vaultgemma-src && rm -rf "$OUT/vaultgemma-src"
TIMEOUT=${T55:-200} bash "$here/holdout_memory.sh" families55 cases/families55-input.jsonl "${1:-}"
