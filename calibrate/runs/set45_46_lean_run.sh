#!/usr/bin/env bash
# Sets 45 (LLaVA-OneVision) and 46 (ERNIE) in the least device time the thirty-first session had left after its
# failed machine starts: no whole-run recordings (runs/set45_46_run.sh makes two), the installed llava_onevision
# modeling file kept, set 45 under a 60 GiB pool and a 140 s harness deadline, then set 46 under 60 s.
#   OUT=dir bash calibrate/runs/set45_46_lean_run.sh SHA45 SHA46   ($OUT/families45.tgz, $OUT/families46.tgz, $OUT/modeling.tgz)
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
mkdir -p "$OUT/src"
python3 -c "import inspect, transformers.models.llava_onevision.modeling_llava_onevision as m; print(inspect.getsource(m))" \
  > "$OUT/src/modeling_llava_onevision.py" 2>&1
tar czf "$OUT/modeling.tgz" -C "$OUT" src && rm -rf "$OUT/src"
MEM_BUDGET_GIB=60 TIMEOUT=${T45:-140} bash "$here/holdout_memory.sh" families45 cases/families45-input.jsonl "${1:-}"
MEM_BUDGET_GIB=60 TIMEOUT=${T46:-60} bash "$here/holdout_memory.sh" families46 cases/families46-input.jsonl "${2:-}"
