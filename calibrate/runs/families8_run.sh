#!/usr/bin/env bash
# Family set 8 (qwen2_moe, opt, roberta / xlm-roberta held out; predictions committed in
# data/validation/predictions/families8-holdout.json and timing17-holdout.json before this ran): the twelve memory
# cases recorded, then the four training cases timed one at a time. ~7 min.
#   OUT=dir bash calibrate/runs/families8_run.sh   ($OUT/families8.tgz, $OUT/timing17.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
CASE_TIMEOUT=300 bash "$here/record_cases.sh" "$here/cases/families8-holdout-input.jsonl" "$work/families8" 4
tar -C "$work" -czf "$OUT/families8.tgz" families8
REPEAT=0 DEADLINE=150 bash "$here/holdout_timing.sh" timing17 cases/timing17-holdout-input.jsonl \
  4e8b4b4be3f1e695feb1adcfe2013ab89433dc55c2d56a830aeb039f1a93a2c6
