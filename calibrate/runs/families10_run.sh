#!/usr/bin/env bash
# Family set 10 (the set 9 families held out; predictions committed in data/validation/predictions/
# families10-holdout.json and timing18-holdout.json before this ran): the 24 memory cases recorded, then the ten
# training cases timed one at a time. ~8 min.
#   OUT=dir bash calibrate/runs/families10_run.sh SHA256   ($OUT/families10.tgz, $OUT/timing18.tgz; SHA256: the
#   timing input's, as committed with its predictions)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
CASE_TIMEOUT=240 bash "$here/record_cases.sh" "$here/cases/families10-holdout-input.jsonl" "$work/families10" 6
tar -C "$work" -czf "$OUT/families10.tgz" families10
REPEAT=0 DEADLINE=170 bash "$here/holdout_timing.sh" timing18 cases/timing18-holdout-input.jsonl "${1:?sha256}"
