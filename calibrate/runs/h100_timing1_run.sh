#!/usr/bin/env bash
# The thirtieth session's third device call: the first H100 step-time set (cases/h100-timing1-input.jsonl, 147 rows
# of the H200 corpus in sha256 order, predicted at the H100's measured rates in
# data/validation/predictions/h100-timing1.json before this ran), timed one case at a time, one pass, cut at the
# deadline (a random subset).
#   OUT=dir bash calibrate/runs/h100_timing1_run.sh SHA256     ($OUT/h100-timing1.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
REPEAT=0 DEADLINE=${DEADLINE:-400} bash "$here/holdout_timing.sh" h100-timing1 cases/h100-timing1-input.jsonl "${1:?sha256}"
