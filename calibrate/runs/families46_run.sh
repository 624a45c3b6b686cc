#!/usr/bin/env bash
# The third device call of the twenty-ninth session: family set 43 (Gemma 3n text, held out, predicted in
# predictions/families43-holdout.json before any device saw it), then the four rows of set 42 (mllama) the second
# call's harness deadline left unmeasured (cases/families42-rest-input.jsonl: those rows of families42-input.jsonl
# byte for byte, predicted in predictions/families42-holdout.json).
#   OUT=dir bash calibrate/runs/families46_run.sh SHA43 SHA42REST
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=${T43:-330} bash "$here/holdout_memory.sh" families43 cases/families43-input.jsonl "${1:-}"
TIMEOUT=${T42:-170} bash "$here/holdout_memory.sh" families42rest cases/families42-rest-input.jsonl "${2:-}"
