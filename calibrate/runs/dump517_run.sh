#!/usr/bin/env bash
# The thirty-fourth session's reading material: every .py of the installed transformers (modeling, configuration,
# generation, integrations) and peft, as tar.xz under $OUT (split at 15 MiB for the transfer limits). Never committed.
#   OUT=dir bash calibrate/runs/dump517_run.sh
set -e -o pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tr=$(python3 -c 'import transformers, os; print(os.path.dirname(transformers.__file__))')
pf=$(python3 -c 'import peft, os; print(os.path.dirname(peft.__file__))')
python3 -c 'import transformers, peft, torch; print(transformers.__version__, peft.__version__, torch.__version__)'
cd "$(dirname "$tr")"
find transformers peft -name '*.py' ! -name 'convert_*' ! -path '*/__pycache__/*' | sort > /tmp/list
wc -l /tmp/list
tar cf - -T /tmp/list | xz -6 -T8 > /tmp/src517.tar.xz
ls -l /tmp/src517.tar.xz
split -b 15M /tmp/src517.tar.xz "$OUT/src517.tar.xz.part-"
ls -l "$OUT"
# Then the whole-run allocator streams (with frames) of the six rows whose reserved peak memplan misses by more
# than 2 % and that were never traced: InternVL amp x2, mllama eager and amp, BioGPT generate, MPT checkpointed.
cd "$here"
set +e
mkdir -p "$OUT/rec"
for p in "40:f40-ivl1b-ampbf16-b2s600-t2-v12-l6" "40:f40-ivl1b-ampbf16-b1s1100-2img-t2-v8-l6" \
         "42:f42-mll-bf16-eager-b1s256-v2g1-v32k-t4" "42:f42-mll-ampbf16-b1s400-2img-v32k-t4" \
         "47:f47-biogpt-infer-bf16-b8s512-g16" "49:f49-mpt7b6-bf16-b3s2048-ckpt"; do
  s=${p%%:*}; id=${p#*:}
  timeout 120 python3 record_case_events.py "cases/families$s-input.jsonl" "$id" "$OUT/rec/$id.json.gz" --frames \
    > "/tmp/$id.log" 2>&1 || { echo "$id failed"; tail -3 "/tmp/$id.log"; }
  ls -l "$OUT/rec/$id.json.gz"
done
