#!/usr/bin/env bash
# The next device session's third call (written in the twenty-sixth, which had none), about 5 minutes: family set 34
# held out (cases/families34-input.jsonl: transformers' ResNetForImageClassification, predicted in
# predictions/families34-holdout.json before any device saw it): the memory rows, the installed modeling_resnet.py
# (the builder was written from an index copy), one timing pass.
#   OUT=dir bash calibrate/runs/families38_run.sh 105b4a38e7213970450525f56c1b91a0633a460ffdf249dc8f28dfaba09a4d23
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=200 bash "$here/holdout_memory.sh" families38 cases/families34-input.jsonl "${1:-}"
(cd "$here" && timeout 60 python3 dump_sources.py "$OUT/sources-resnet.tar.gz" resnet > /dev/null 2>&1) ||
  echo "dump_sources failed"
REPEAT=0 DEADLINE=${DEADLINE:-120} bash "$here/holdout_timing.sh" timing61 cases/families34-input.jsonl "${1:-}"
