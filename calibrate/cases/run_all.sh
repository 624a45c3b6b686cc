#!/bin/bash
# Measures the public cases (reproduction check), the uncapped corpus, then capped cases derived from it.
# Usage on the GPU machine (repo root):  OUT=/some/dir bash calibrate/cases/run_all.sh [public] [corpus] [capped]
# Results: $OUT/{env.json,public.partial.jsonl,corpus.partial.jsonl,capped-input.jsonl,capped.partial.jsonl,run.log}
set -u
export PYTHONUNBUFFERED=1
OUT=${OUT:?set OUT}
JOBS=${JOBS:-5}
H="python3 calibrate/harness.py --jobs $JOBS --timeout ${CASE_TIMEOUT:-150}"
phases=${*:-public corpus capped}
log=$OUT/run.log
for p in $phases; do
  case $p in
    public) $H data/validation/h200-public-cases.jsonl --env $OUT/env.json --out /tmp/public.jsonl \
              --partial $OUT/public.partial.jsonl >>$log 2>&1 ;;
    corpus) $H calibrate/cases/corpus-input.jsonl ${ONLY:+--only "$ONLY"} --out /tmp/corpus.jsonl \
              --partial $OUT/corpus.partial.jsonl >>$log 2>&1 ;;
    capped) python3 calibrate/cases/make_capped.py /tmp/corpus.jsonl $OUT/capped-input.jsonl >>$log 2>&1 &&
            $H $OUT/capped-input.jsonl --out /tmp/capped.jsonl --partial $OUT/capped.partial.jsonl >>$log 2>&1 ;;
  esac
  echo "== phase $p done $(date +%T)" >>$log
done
grep -E "summary|ERROR|max relative|^  [a-z_]+ +[0-9.]+%|> 1%|retry|== phase" $log | tail -80
