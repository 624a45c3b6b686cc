#!/usr/bin/env bash
# Family set 17, tuning rows (olmo3, ernie4_5_moe, phimoe, albert, mpnet, dinov2, deit, lfm2; whisper and mbart
# generate; measured before they are modelled), the transformers sources they need, and where the host time of ten
# host-bound encoder / seq2seq steps goes (issue 17: the host model overstates BERT / CamemBERT / ViT-L and
# understates XLM-R / DeBERTa / Opus-MT): host_issue.py (issue time, syncs, Python top functions) then
# host_profile.py (aten ops by self CPU time), one case at a time before the recordings. One call, ~9 min.
#   OUT=dir bash calibrate/runs/families17_run.sh   ($OUT/families17.tgz, $OUT/host17.tgz, $OUT/sources17.tgz)
set -u
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")/.." && pwd)
R=$OUT/h; mkdir -p "$R"
(cd "$here"
 { for m in torch torchvision transformers; do python3 -c "import $m; print('$m', $m.__version__)"; done
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; nvidia-smi --query-gpu=name,memory.used --format=csv; } > "$R/versions.txt" 2>&1
 python3 dump_sources.py "$OUT/sources17.tgz" olmo3 olmo2 ernie4_5 ernie4_5_moe phimoe phi3 mixtral albert mpnet \
   dinov2 deit vit lfm2 whisper mbart bart auto > "$R/sources.log" 2>&1
 timeout 100 python3 host_issue.py cases/host17-input.jsonl --out "$R/host-issue-17.json" --steps 4 --timeout 40 \
   --deadline-s 95 2>&1 | grep -v "^\[transformers\]" | tail -15
 timeout 100 python3 host_profile.py cases/host17-input.jsonl --out "$R/host-profile-17.json" --timeout 40 2>&1 |
   grep -v "^\[transformers\]" | tail -15
)
tar czf "$OUT/host17.tgz" -C "$R" . && rm -rf "$R"
work=$(mktemp -d)
timeout 330 python3 "$here/record_cases_budget.py" "$here/cases/families17-input.jsonl" "$work/families17" --jobs 8 \
  --budget-gib 125 --timeout 280 > "$OUT/progress.log" 2>&1
tar -C "$work" -czf "$OUT/families17.tgz" families17
tail -50 "$OUT/progress.log"
