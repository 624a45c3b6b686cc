#!/usr/bin/env bash
# The thirty-second session's one family call: the installed (5.17) modeling files of candidate families
# (sources_and_set45_46_run.sh's list), then sets 45 (LLaVA-OneVision), 46 (ERNIE), 47 (BioGPT), 48 (XLM-R XL) and 49 (MPT), each predicted
# in data/validation/predictions/ before any device saw it, without whole-run recordings (the session's device
# starts had failed; set45_46_run.sh records two streams when time allows).
#   OUT=dir bash calibrate/runs/session32_run.sh SHA45 SHA46 SHA47 SHA48 SHA49
#     ($OUT/sources.tgz, $OUT/families45.tgz .. $OUT/families49.tgz)
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT/src"
# The list lives in sources_and_set45_46_run.sh: reuse its Python block alone.
sed -n "/^python3 - \"\$OUT\/src\" <<'PY'$/,/^PY$/p" "$here/runs/sources_and_set45_46_run.sh" | sed '1d;$d' > "$OUT/src_list.py"
python3 "$OUT/src_list.py" "$OUT/src"; rm -f "$OUT/src_list.py"
tar czf "$OUT/sources.tgz" -C "$OUT" src && rm -rf "$OUT/src"
cd "$here"
MEM_BUDGET_GIB=60 TIMEOUT=${T45:-130} bash "$here/holdout_memory.sh" families45 cases/families45-input.jsonl "${1:-}"
MEM_BUDGET_GIB=60 TIMEOUT=${T46:-60} bash "$here/holdout_memory.sh" families46 cases/families46-input.jsonl "${2:-}"
MEM_BUDGET_GIB=60 TIMEOUT=${T47:-80} bash "$here/holdout_memory.sh" families47 cases/families47-input.jsonl "${3:-}"
MEM_BUDGET_GIB=60 TIMEOUT=${T48:-80} bash "$here/holdout_memory.sh" families48 cases/families48-input.jsonl "${4:-}"
MEM_BUDGET_GIB=60 TIMEOUT=${T49:-80} bash "$here/holdout_memory.sh" families49 cases/families49-input.jsonl "${5:-}"
