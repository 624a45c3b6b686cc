#!/usr/bin/env bash
# The thirty-fourth session's last call: family sets 54 (NanoChat), 55 (VaultGemma), 59 (T5Gemma) and 58
# (DeepSeek-V3.2), then the three rows of sets 56 / 57 the fourth call's deadlines left, as one harness run over
# cases/session34-rest-input.jsonl: each line copied unchanged from its set's input, whose sha256 the set's
# predictions name (data/validation/predictions/families54/55/58/59-holdout.json).
#   OUT=dir bash calibrate/runs/session34b_run.sh
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
for s in 54 55 58 59; do sha256sum cases/families$s-input.jsonl; done
TIMEOUT=${T:-430} bash holdout_memory.sh session34rest cases/session34-rest-input.jsonl ""
