#!/usr/bin/env bash
# The next device session's second call (written in the twenty-sixth), about 6 minutes: (1) family set 33 held out
# (cases/families33-input.jsonl: LoRA with a classification head, harness.apply_lora passing peft's task_type;
# predicted in predictions/families33-holdout.json before any device saw them): the memory rows; (2)
# t5miss36_run.sh (the set-31 T5 miss's whole-run recording, peft's LoRA Linear as a host class).
#   OUT=dir bash calibrate/runs/families37_run.sh 7ccb357019f60ff07c82cc6219b95b3c00a1ae04421a97663c17881ed0a07bbd
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=200 bash "$here/holdout_memory.sh" families37 cases/families33-input.jsonl "${1:-}"
mkdir -p "$OUT/t5miss" && OUT="$OUT/t5miss" bash "$here/runs/t5miss36_run.sh"
(cd "$OUT" && tar czf t5miss.tgz t5miss && rm -rf t5miss)
