#!/usr/bin/env bash
# The next device session's third call (written in the twenty-sixth, which had none), about 7 minutes: family set 34
# held out (cases/families34-input.jsonl: transformers' ResNetForImageClassification) and family set 35
# (cases/families35-input.jsonl: DINOv3ViTModel's inference forward), each predicted in predictions/ before any
# device saw them: the memory rows, the installed modeling files (the builders were written from index copies), one
# timing pass of set 34.
#   OUT=dir bash calibrate/runs/families38_run.sh 105b4a38e7213970450525f56c1b91a0633a460ffdf249dc8f28dfaba09a4d23 \
#     341d483df42f8a1605a6d7f2cb6e8b3e30030e69fb5c76154cb77cd24abdfcb1
here=$(cd "$(dirname "$0")/.." && pwd)
TIMEOUT=200 bash "$here/holdout_memory.sh" families38 cases/families34-input.jsonl "${1:-}"
TIMEOUT=150 bash "$here/holdout_memory.sh" families39 cases/families35-input.jsonl "${2:-}"
(cd "$here" && timeout 60 python3 dump_sources.py "$OUT/sources-resnet-dinov3.tar.gz" resnet dinov3_vit > /dev/null 2>&1) ||
  echo "dump_sources failed"
REPEAT=0 DEADLINE=${DEADLINE:-120} bash "$here/holdout_timing.sh" timing61 cases/families34-input.jsonl "${1:-}"
