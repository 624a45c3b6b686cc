#!/usr/bin/env bash
# The thirty-fifth session's first call: the eight rows of family sets 54 .. 59 the thirty-fourth session's
# deadlines left unmeasured (cases/session35-rest-input.jsonl: each line copied unchanged from its set's input,
# whose sha256 the set's predictions name), then whole-run streams with frames of the untraced misses: NanoChat LoRA
# (-9.12 % reserved) and generate() (-2.16 % allocated), DeepSeek-V3.2 eager (-5.28 %) and fp32 (+6.51 %), MPT
# checkpointed (+3.98 %).
#   OUT=dir bash calibrate/runs/session35a_run.sh
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in 54 56 57 58 59; do sha256sum cases/families$s-input.jsonl; done
TIMEOUT=${T:-230} bash holdout_memory.sh session35rest cases/session35-rest-input.jsonl ""
mkdir -p "$OUT/rec"
for p in "families54-input:f54-d32x8-bf16-lora-b4s1000" "families58-input:f58-v32s-bf16-eager-b3s1000" \
         "families58-input:f58-v32s-fp32-b1s2400" "families54-input:f54-d20-infer-bf16-b5s700-g16" \
         "families49-input:f49-mpt7b6-bf16-b3s2048-ckpt"; do
  f=${p%%:*}; id=${p#*:}
  timeout ${TREC:-120} python3 record_case_events.py "cases/$f.jsonl" "$id" "$OUT/rec/$id.json.gz" --frames \
    > "/tmp/$id.log" 2>&1 || { echo "$id failed"; tail -3 "/tmp/$id.log"; }
  ls -l "$OUT/rec/$id.json.gz"
done
