#!/usr/bin/env bash
# Held out 5 of the step-time model (issue 17 part 3): measures the 13 cases of
# calibrate/cases/timing5-holdout-input.jsonl (calibrate/cases/make_timing5.py), whose predictions were committed
# before any was measured (data/validation/predictions/timing5-holdout.json).
#   OUT=dir bash calibrate/timing11_run.sh        (one device call, ~4-6 min on an H200; nothing else on the GPU)
# Timings are printed nowhere (--quiet): read them only from the tarball, after checking cases.sha256 says "match".
# A second pass of the same cases follows (REPEAT=0 skips it): run-to-run spread within one call, which the
# host-bound rows need (NOTES-time.md: up to 1.7x between calls). Everything is packed into ONE file,
# $OUT/timing11.tgz (the device returns at most 8 files): the two JSONL results (and .partial files if a pass was
# cut), their logs, env.json (harness.env_probe: versions, driver, SDPA choices), versions.txt (peft, CPU, load),
# nvidia-smi before and after, the input's checksum.
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p "$R"
CASES=cases/timing5-holdout-input.jsonl
EXPECT=b4660dafb4b6d158cf18b7d808d4d264d2cc73a658f0adbf7aace4e95ef8695e  # the file as committed with its predictions
Q="name,memory.used,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,pstate"
nvidia-smi --query-gpu=$Q --format=csv > "$R/nvidia-smi-before.csv" 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv >> "$R/nvidia-smi-before.csv" 2>&1
(cd calibrate
 got=$(sha256sum "$CASES" | cut -d' ' -f1)
 if [ "$got" = "$EXPECT" ]; then echo "$got match"; else echo "$got MISMATCH (expected $EXPECT)"; fi |
   tee "$R/cases.sha256"
 { for m in torch torchvision transformers peft; do python3 -c "import $m; print('$m', $m.__version__)"; done
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; free -m | head -2; date -u +%FT%TZ
 } > "$R/versions.txt" 2>&1
 timeout 270 python3 timing_corpus.py "$CASES" --out "$R/timing5-holdout.jsonl" --env "$R/env.json" --quiet \
   --warmup 2 --steps 4 --timeout 90 --deadline-s 200 2>&1 | tee "$R/timing5-holdout.log" | cut -c1-120
 if [ "${REPEAT:-1}" != 0 ]; then
   timeout 200 python3 timing_corpus.py "$CASES" --out "$R/timing5-holdout-rep.jsonl" --quiet \
     --warmup 2 --steps 4 --timeout 90 --deadline-s 130 2>&1 | tee "$R/timing5-holdout-rep.log" | cut -c1-120
 fi
)
nvidia-smi --query-gpu=$Q --format=csv > "$R/nvidia-smi-after.csv" 2>&1
tar czf "$OUT/timing11.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
