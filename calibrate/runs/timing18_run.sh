#!/usr/bin/env bash
# Held-out step-time sets 18 and 19 (training rows of family sets 10 and 12; predictions committed in
# data/validation/predictions/timing18-holdout.json, timing19-holdout.json before this ran), timed one at a time,
# one pass. ~3.5 min.
#   OUT=dir bash calibrate/runs/timing18_run.sh SHA18 [SHA19]   ($OUT/timing18.tgz, $OUT/timing19.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
REPEAT=0 DEADLINE=130 bash "$here/holdout_timing.sh" timing18 cases/timing18-holdout-input.jsonl "${1:?sha256}"
if [ -n "${2:-}" ]; then
  REPEAT=0 DEADLINE=45 bash "$here/holdout_timing.sh" timing19 cases/timing19-holdout-input.jsonl "$2"
fi
