#!/usr/bin/env bash
# The thirty-first session's device call: more of the first H100 step-time set. cases/h100-timing1b-input.jsonl
# holds, byte for byte and in their order, the 120 rows of cases/h100-timing1-input.jsonl that the thirtieth
# session's call (h100_timing1_run.sh) did not time, with the one that timed out there (Qwen3.5-MoE,
# h100-ht23-q35m-bf16-b2s2048) moved to the end; every row is still blind (predicted in
# data/validation/predictions/h100-timing1.json before either call). Timed one case at a time, one pass, cut at
# the deadline.
#   OUT=dir bash calibrate/runs/h100_timing1b_run.sh SHA256     ($OUT/h100-timing1b.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
REPEAT=0 DEADLINE=${DEADLINE:-390} bash "$here/holdout_timing.sh" h100-timing1b cases/h100-timing1b-input.jsonl "${1:?sha256}"
