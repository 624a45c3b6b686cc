#!/usr/bin/env bash
# The thirty-fourth session's fourth call: family sets 56 (GLM-4.7-Flash) and 57 (Arcee Trinity), each predicted in
# data/validation/predictions/ before any device saw it, then the MPT checkpointed row's whole-run stream with frames.
#   OUT=dir bash calibrate/runs/session34a_run.sh SHA56 SHA57
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
T56=${T56:-220} bash runs/families56_run.sh "${1:-}"
T57=${T57:-220} bash runs/families57_run.sh "${2:-}"
mkdir -p "$OUT/rec"
id=f49-mpt7b6-bf16-b3s2048-ckpt
timeout 80 python3 record_case_events.py cases/families49-input.jsonl "$id" "$OUT/rec/$id.json.gz" --frames \
  > "/tmp/$id.log" 2>&1 || { echo "$id failed"; tail -3 "/tmp/$id.log"; }
ls -l "$OUT"/*.tgz "$OUT/rec"
