#!/usr/bin/env bash
# Host costs measured where held out 13's misses put them (issue 17 part 3, ninth session), one device call:
# 1. ckpt_host.py: what non-reentrant checkpointing adds to a block's host time, per op and per saved tensor;
# 2. host_overhead.py: the host classes again, now fp32, pure bf16 and autocast bf16 (the first run stopped at its
#    sdpa class in fp32).
#   OUT=dir bash calibrate/runs/timing31_run.sh     (~3 min; $OUT/timing31.tgz)
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r31; mkdir -p "$R"
(cd calibrate
 { nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; } > "$R/versions.txt" 2>&1
 timeout 200 python3 ckpt_host.py "$R/ckpt-host.json" 2>&1 | tee "$R/ckpt-host.log"
 timeout 300 python3 host_overhead.py "$R/host-overhead.json" 2>&1 | tee "$R/host-overhead.log" | tail -70
)
tar czf "$OUT/timing31.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
