#!/usr/bin/env bash
# Twenty-fifth session, fourth call: family set 31, held out (cases/families31-input.jsonl, predicted in
# predictions/families31-holdout.json before any device saw it): the memory rows, then one timing pass.
#   OUT=dir bash calibrate/runs/families35_run.sh 9c5d35e08b706feeec78e9b28d6237ccbf87df7278957742a082b8d1a8ec7eb5
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=200 bash "$here/holdout_memory.sh" families35 cases/families31-input.jsonl "${1:-}"
REPEAT=0 DEADLINE=${DEADLINE:-170} bash "$here/holdout_timing.sh" timing59 cases/families31-input.jsonl "${1:-}"
