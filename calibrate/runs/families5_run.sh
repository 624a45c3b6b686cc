#!/usr/bin/env bash
# Family set 5 (held out; predictions committed in data/validation/predictions/families5-holdout.json and
# timing15-holdout.json before this ran): whole-run allocator recordings of the twelve memory cases, then the six
# training cases timed one at a time (calibrate/holdout_timing.sh, one pass). One device call, ~6 min.
#   OUT=dir bash calibrate/runs/families5_run.sh   ($OUT/families5.tgz, $OUT/timing15.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
(cd "$here/cases" && sha256sum families5-holdout-input.jsonl) > "$OUT/families5.sha256"
CASE_TIMEOUT=300 bash "$here/record_cases.sh" "$here/cases/families5-holdout-input.jsonl" "$work/families5" 4
tar -C "$work" -czf "$OUT/families5.tgz" families5
REPEAT=0 DEADLINE=240 bash "$here/holdout_timing.sh" timing15 cases/timing15-holdout-input.jsonl \
  14ccff1da76aeade93cb959a8b02773c842ea66cea21ba600ad51f227f349b89
