#!/usr/bin/env bash
# One device call, about 6 minutes: family set 37 held out (cases/families37-input.jsonl: SegformerForSemanticSegmentation
# and SegformerForImageClassification, predicted in predictions/families37-holdout.json before any device saw them):
# the memory rows, the installed modeling file (the builder was written from an index copy: notes-f37/segformer.md
# lists what to diff), one timing pass.
#   OUT=dir bash calibrate/runs/families37seg_run.sh fae8763434aae163999fb6c4f0247464932f1fc7ed602510b47f78b10f3c87f1
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=240 bash "$here/holdout_memory.sh" families37seg cases/families37-input.jsonl "${1:-}"
(cd "$here" && timeout 60 python3 dump_sources.py "$OUT/sources-segformer.tar.gz" segformer > /dev/null 2>&1) ||
  echo "dump_sources failed"
REPEAT=0 DEADLINE=${DEADLINE:-120} bash "$here/holdout_timing.sh" timing37seg cases/families37-input.jsonl "${1:-}"
