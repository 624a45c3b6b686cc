#!/usr/bin/env bash
# The thirty-fifth session's last call: the family sets its helpers predicted (each set's input checked against the
# sha256 its predictions name, then all their lines, unchanged, in one harness run so that the call's deadline cuts
# the last rows rather than whole sets), after the device's installed modeling / configuration files of each new
# model type ($OUT/sources.tgz), to check them against the copies the builders followed.
#   OUT=dir bash calibrate/runs/session35b_run.sh "62 63 64 65 66" "granite_swa granitemoe_swa glm_moe_dsa solar_open deepseek_v4"
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
sets=${1:?set numbers} types=${2:-}
mkdir -p "$OUT/sources"
python3 - "$OUT/sources" $types <<'PY' || echo "sources not copied"
import importlib, os, shutil, sys
for t in sys.argv[2:]:
    d = os.path.dirname(importlib.import_module("transformers.models." + t).__file__)
    os.makedirs(os.path.join(sys.argv[1], t), exist_ok=True)
    for f in os.listdir(d):
        if f.startswith(("modeling_", "configuration_", "modular_")):
            shutil.copy(os.path.join(d, f), os.path.join(sys.argv[1], t))
PY
tar czf "$OUT/sources.tgz" -C "$OUT" sources && rm -rf "$OUT/sources"
: > cases/session35b-input.jsonl
for s in $sets; do
  want=$(python3 -c "import json; print(json.load(open('../data/validation/predictions/families$s-holdout.json'))['input_sha256'])")
  echo "$want cases/families$s-input.jsonl" | sha256sum -c - || echo "SET $s: INPUT CHANGED SINCE THE PREDICTIONS"
  cat "cases/families$s-input.jsonl" >> cases/session35b-input.jsonl
done
wc -l cases/session35b-input.jsonl
TIMEOUT=${T:-500} bash holdout_memory.sh session35b cases/session35b-input.jsonl ""
