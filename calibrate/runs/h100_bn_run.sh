#!/usr/bin/env bash
# The thirtieth session's second device call: batch-norm times per shape on the H100 (bn_time.py: the first call's
# 45 s timeout cut it while it built its signatures), then the four rows of family set 43 and its two caps that the
# twenty-ninth session's budget left unmeasured (cases/families43-rest-input.jsonl, predicted in
# predictions/families43-holdout.json before any device saw them).
#   OUT=dir bash calibrate/runs/h100_bn_run.sh SHA43REST     ($OUT/h100-bn.tgz, $OUT/families43rest.tgz)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
d="$OUT/h100-bn"; mkdir -p "$d"
(cd "$here" && PYTHONUNBUFFERED=1 timeout 170 python3 bn_time.py "$d/bn-time.json" --deadline-s=120 > "$d/bn_time.log" 2>&1; echo "bn_time rc=$?" >> "$d/bn_time.log")
tail -2 "$d/bn_time.log"
tar czf "$OUT/h100-bn.tgz" -C "$OUT" h100-bn && rm -rf "$d"
TIMEOUT=${T43:-300} bash "$here/holdout_memory.sh" families43rest cases/families43-rest-input.jsonl "${1:-}"
