#!/usr/bin/env bash
# Checkpointing's host cost in situ (issue 17 part 3, ninth session), one device call:
# 1. host_issue.py on the host-tiny set (cases/make_host_tiny.py: eight corpus models at batch 1 x 64 tokens, each
#    with and without checkpointing; predicted in data/validation/predictions/host-tiny.json before this ran);
# 2. ckpt_host.py a second time (its spread between calls).
#   OUT=dir bash calibrate/runs/timing32_run.sh     (~3 min; $OUT/timing32.tgz)
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r32; mkdir -p "$R"
(cd calibrate
 { nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; sha256sum cases/host-tiny-input.jsonl; } \
   > "$R/versions.txt" 2>&1
 timeout 300 python3 host_issue.py cases/host-tiny-input.jsonl --out "$R/host-tiny.json" --steps 6 --timeout 60 \
   --deadline-s 260 2>&1 | grep -v "^\[transformers\]" | tee "$R/host-tiny.log" | cut -c1-160
 timeout 120 python3 ckpt_host.py "$R/ckpt-host-2.json" 2>&1 | tee "$R/ckpt-host-2.log"
)
tar czf "$OUT/timing32.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
