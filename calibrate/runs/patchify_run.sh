#!/usr/bin/env bash
# The thirty-fourth session's second call: cuDNN's workspaces for the patch-embedding stems (conv_workspace.py
# --patchify), then the whole-run streams, with frames, of the two Llama 3.2 Vision rows whose reserved peak the
# patch stem alone does not explain (families42).
#   OUT=dir bash calibrate/runs/patchify_run.sh
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 330 python3 conv_workspace.py /tmp/patchify.json --patchify 2> /tmp/patchify.log; echo "conv rc $?"
tail -2 /tmp/patchify.log
gzip -c /tmp/patchify.json > "$OUT/patchify-conv-workspace.json.gz"
mkdir -p "$OUT/rec"
for id in f42-mll-bf16-eager-b1s256-v2g1-v32k-t4 f42-mll-ampbf16-b1s400-2img-v32k-t4; do
  timeout 100 python3 record_case_events.py cases/families42-input.jsonl "$id" "$OUT/rec/$id.json.gz" --frames \
    > "/tmp/$id.log" 2>&1 || { echo "$id failed"; tail -3 "/tmp/$id.log"; }
  ls -l "$OUT/rec/$id.json.gz"
done
