#!/usr/bin/env bash
# For a device call of the twenty-eighth session (or the next): family sets 36 (ESM and DINOv3 at new shapes after
# the set 32 / 35 corrections) and 38 (BEiT and Data2Vec-vision), both held out and predicted before any device saw
# them (predictions/families36-holdout.json at 685eb49, predictions/families38-holdout.json); first the installed
# modeling sources of the families written from older copies (dump_sources.py: read here, never committed).
#   OUT=dir bash calibrate/runs/families41_run.sh SHA36 SHA38
here=$(cd "$(dirname "$0")/.." && pwd)
(cd "$here" && python3 dump_sources.py "$OUT/src517.tar.gz" beit data2vec segformer swinv2 internvl llava_next \
  mllama gemma3n > "$OUT/dump.log" 2>&1) || echo "dump_sources failed (dump.log)"
TIMEOUT=200 bash "$here/holdout_memory.sh" families41a cases/families36-input.jsonl "${1:-}"
TIMEOUT=200 bash "$here/holdout_memory.sh" families41b cases/families38-input.jsonl "${2:-}"
