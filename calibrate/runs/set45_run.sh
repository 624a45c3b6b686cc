#!/usr/bin/env bash
# The thirty-first session's family set 45 call: LLaVA-OneVision held out (cases/families45-input.jsonl, predicted in
# predictions/families45-holdout.json before any device saw it), measured with a 40 GiB pool while the whole-run
# allocator streams of its two rows with new mechanisms are recorded beside it (the amp anyres_max resize, fp32 by
# F.interpolate under autocast, and two untiled images a sample), and the installed modeling file is kept
# (the builder mirrors the code index's 4.5x-era copy: the diff says what 5.17 changed).
#   OUT=dir bash calibrate/runs/set45_run.sh SHA45     ($OUT/families45.tgz, $OUT/rec45b.tgz)
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
mkdir -p "$OUT/rec"
python3 - > "$OUT/rec/modeling_llava_onevision.py" 2>&1 <<'PY'
import inspect
import transformers.models.llava_onevision.modeling_llava_onevision as m
print(inspect.getsource(m))
PY
(grep '"f45-ov05-ampbf16-b2s2400-500x900-max2-v12"\|"f45-ov05-bf16-b2s1600-2img"' \
   cases/families45-input.jsonl > "$OUT/rec/f45.jsonl"
 for id in f45-ov05-bf16-b2s1600-2img f45-ov05-ampbf16-b2s2400-500x900-max2-v12; do
   timeout 150 python3 record_case_events.py "$OUT/rec/f45.jsonl" "$id" "$OUT/rec/$id.json.gz" > "$OUT/rec/$id.log" 2>&1
 done; rm -f "$OUT/rec/f45.jsonl") &
rec=$!
MEM_BUDGET_GIB=40 TIMEOUT=${T45:-330} bash "$here/holdout_memory.sh" families45 cases/families45-input.jsonl "${1:-}"
wait $rec
tar czf "$OUT/rec45b.tgz" -C "$OUT" rec && rm -rf "$OUT/rec"
