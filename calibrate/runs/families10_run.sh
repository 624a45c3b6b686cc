#!/usr/bin/env bash
# Family sets 10 and 12 (the set 9 and set 11 families held out; predictions committed in
# data/validation/predictions/families10-holdout.json and families12-holdout.json before this ran): the memory
# cases recorded whole-run, six processes at a time. ~5 min. The step times follow in timing18_run.sh.
#   OUT=dir bash calibrate/runs/families10_run.sh   ($OUT/families10.tgz, $OUT/families12.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
for s in 10 12; do
  [ -s "$here/cases/families$s-holdout-input.jsonl" ] || continue
  CASE_TIMEOUT=240 bash "$here/record_cases.sh" "$here/cases/families$s-holdout-input.jsonl" "$work/families$s" 6
  tar -C "$work" -czf "$OUT/families$s.tgz" "families$s"
done
