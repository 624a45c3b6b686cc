#!/usr/bin/env bash
# The thirty-sixth session's first call: family sets 62 .. 66 (predicted in the thirty-fifth session, never measured:
# session35b_run.sh, each set's input checked against the sha256 its predictions name), then set 58's published-width
# training row (f58-v32p-bf16-b1s2300, copied unchanged from families58-input.jsonl; the deadlines of two calls cut it)
# alone, with what time is left.
#   OUT=dir bash calibrate/runs/session36a_run.sh
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
T=${T:-400} bash runs/session35b_run.sh "64 65 66 62 63" "glm_moe_dsa solar_open deepseek_v4 granite_swa granitemoe_swa"
grep '"f58-v32p-bf16-b1s2300"' cases/families58-input.jsonl > cases/session36-f58-input.jsonl
TIMEOUT=${T58:-150} bash holdout_memory.sh session36f58 cases/session36-f58-input.jsonl ""
