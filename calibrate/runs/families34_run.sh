#!/usr/bin/env bash
# A call for a session with a device (written in the twenty-third session, which was lent none): family set 30,
# held out (cases/families30-input.jsonl, predicted in predictions/families30-holdout.json before any device saw
# it): the memory rows, then one timing pass of its uncapped rows against the same predictions.
#   OUT=dir bash calibrate/runs/families34_run.sh 93b0a093e825e9a63957b238df94e411ec5f499ab4d8b9d0751f04007a58cf80
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=220 bash "$here/holdout_memory.sh" families34 cases/families30-input.jsonl "${1:-}"
REPEAT=0 DEADLINE=${DEADLINE:-200} bash "$here/holdout_timing.sh" timing57 cases/families30-input.jsonl "${1:-}"
