#!/usr/bin/env bash
# Held-out step-time set 20 (the first timed rows of family sets 13 and 14's heads and families; predictions
# committed in data/validation/predictions/timing20-holdout.json before this ran), timed one at a time, one pass,
# then the transformers sources family set 15 needs. ~5 min.
#   OUT=dir bash calibrate/runs/timing20_run.sh SHA20   ($OUT/timing20.tgz, $OUT/sources15.tar.gz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
REPEAT=0 DEADLINE=330 bash "$here/holdout_timing.sh" timing20 cases/timing20-holdout-input.jsonl "${1:?sha256}"
python3 "$here/dump_sources.py" "$OUT/sources15.tar.gz" marian pegasus m2m_100 mt5 umt5 camembert electra cohere \
  cohere2 glm4 glm4_moe gpt_neo vit bart roberta deepseek_v3 auto > "$OUT/dump.log" 2>&1
tail -3 "$OUT/dump.log"
