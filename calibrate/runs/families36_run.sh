#!/usr/bin/env bash
# For the next session with a device (written in the twenty-sixth, which had none), one call of about 7 minutes:
# (1) family set 32 held out (cases/families32-input.jsonl: the ESM builder's first rows, predicted in
# predictions/families32-holdout.json before any device saw them): the memory rows; (2) the transformers source the
# esm builder mirrors, as installed there (dump_sources.py esm: the builder was written from an index copy of
# modeling_esm.py, not 5.17's); (3) one timing pass of set 32. families37_run.sh is the second call.
#   OUT=dir bash calibrate/runs/families36_run.sh 6256aa2fd2e28344dd37f8d8f71511f628c949c14e471406d5119c87beedd620
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=200 bash "$here/holdout_memory.sh" families36 cases/families32-input.jsonl "${1:-}"
(cd "$here" && timeout 60 python3 dump_sources.py "$OUT/sources-esm.tar.gz" esm > /dev/null 2>&1) ||
  echo "dump_sources failed"
REPEAT=0 DEADLINE=${DEADLINE:-150} bash "$here/holdout_timing.sh" timing60 cases/families32-input.jsonl "${1:-}"
