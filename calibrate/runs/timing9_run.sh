#!/usr/bin/env bash
# Held out 3 in a second device call (timing7_run.sh measured it in the first: host-bound rows move by up to 1.9x
# between calls, NOTES-time.md fourth round), and a host profile of the DenseNets, ViT-L and Swin-V2-T.
#   OUT=dir bash calibrate/runs/timing9_run.sh        (one device call, ~3 min; packed into $OUT/timing9.tgz)
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p "$R"
(cd calibrate
 { for m in torch torchvision transformers; do python3 -c "import $m; print('$m', $m.__version__)"; done
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; } > "$R/versions.txt" 2>&1
 sha256sum cases/timing3-holdout-input.jsonl > "$R/cases.sha256"
 timeout 200 python3 timing_corpus.py cases/timing3-holdout-input.jsonl --out "$R/timing3-holdout-call2.jsonl" \
   --quiet --warmup 2 --steps 4 --timeout 90 --deadline-s 180 2>&1 | grep -v "^\[transformers\]" |
   tee "$R/timing3-call2.log" | cut -c1-120
 timeout 100 python3 host_profile.py cases/host-profile-input.jsonl --out "$R/host-profile.json" 2>&1 |
   grep -v "^\[transformers\]" | tee "$R/host-profile.log" | cut -c1-160
)
tar czf "$OUT/timing9.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
