#!/usr/bin/env bash
# Where memplan's replayed allocator events for one validation case differ from a run recorded on the GPU:
#   scripts/diff-case-events.sh CASES.jsonl ID RECORDING.json.gz [calibrate/diff_events.py options]
# e.g. scripts/diff-case-events.sh data/validation/h200-families.jsonl f1-dsv2-bf16-adamw-b2s1024 \
#        data/validation/recordings/families1/f1-dsv2-bf16-adamw-b2s1024.json.gz --min-mib 1 --max 40
# (recordings come from calibrate/record_case_events.py on the GPU machine). Uses build/cli/memplan, or $MEMPLAN.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,6p' "$0" >&2; exit 64; }
cases=$1 id=$2 recording=$3
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
ours=$(mktemp /tmp/memplan-events-XXXXXX.txt)
trap 'rm -f "$ours"' EXIT
"${MEMPLAN:-$root/build/cli/memplan}" validate "$cases" --only "$id" --events-out "$ours" >/dev/null
python3 "$root/calibrate/diff_events.py" "$recording" "$ours" "$@"
