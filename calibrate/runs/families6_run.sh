#!/usr/bin/env bash
# Family set 6 (cohere, held out; predictions committed in data/validation/predictions/families6-holdout.json and
# timing16-holdout.json before this ran): the five memory cases recorded, the three training cases timed one at a
# time, then held out 15 timed again (a second device call for its six rows: the host's spread). ~4 min.
#   OUT=dir bash calibrate/runs/families6_run.sh   ($OUT/families6.tgz, $OUT/timing16.tgz, $OUT/timing15b.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
CASE_TIMEOUT=300 bash "$here/record_cases.sh" "$here/cases/families6-holdout-input.jsonl" "$work/families6" 4
tar -C "$work" -czf "$OUT/families6.tgz" families6
REPEAT=0 DEADLINE=200 bash "$here/holdout_timing.sh" timing16 cases/timing16-holdout-input.jsonl \
  e0b06484607919b0df82c6e8d3e0a78aeee98810a7d92496b8efe7fccb4a8ebd
REPEAT=0 DEADLINE=200 bash "$here/holdout_timing.sh" timing15b cases/timing15-holdout-input.jsonl \
  14ccff1da76aeade93cb959a8b02773c842ea66cea21ba600ad51f227f349b89
