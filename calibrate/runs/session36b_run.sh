#!/usr/bin/env bash
# The thirty-sixth session's last call: the family sets its helpers predicted, each input checked against the sha256
# its predictions name, their lines interleaved round-robin (each set's own order kept) into one harness run so that
# the call's deadline cuts every set's last rows rather than whole sets; first the device's installed modeling /
# configuration files of each new model type ($OUT/sources.tgz), to check them against the copies the builders
# followed.
#   OUT=dir bash calibrate/runs/session36b_run.sh "67 68 ..." "minicpm3 longcat_flash ..."     (T: seconds, default 480)
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
sets=${1:?set numbers} types=${2:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
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
for s in $sets; do
  want=$(python3 -c "import json; print(json.load(open('../data/validation/predictions/families$s-holdout.json'))['input_sha256'])")
  echo "$want cases/families$s-input.jsonl" | sha256sum -c - || echo "SET $s: INPUT CHANGED SINCE THE PREDICTIONS"
done
python3 - $sets > cases/session36b-input.jsonl <<'PY'
import itertools, sys
files = [open(f"cases/families{s}-input.jsonl").read().splitlines() for s in sys.argv[1:]]
for row in itertools.zip_longest(*files):
    for line in row:
        if line:
            print(line)
PY
wc -l cases/session36b-input.jsonl
TIMEOUT=${T:-480} bash holdout_memory.sh session36b cases/session36b-input.jsonl ""
