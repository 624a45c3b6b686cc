#!/usr/bin/env bash
# Times a held-out step-time set whose predictions were committed before it is measured (issue 17 part 3).
#   OUT=dir bash calibrate/holdout_timing.sh NAME CASES SHA256     (one device call; nothing else on the GPU)
# NAME: the tarball's name ($OUT/NAME.tgz: the device returns at most 8 files); CASES: the input, relative to
# calibrate/; SHA256: the input as committed with its predictions (cases.sha256 says "match" or "MISMATCH").
# Timings are printed nowhere (--quiet): read them only from the tarball. A second pass of the same cases follows
# (REPEAT=0 skips it): the spread within one call. Packed: the JSONL results (and .partial files of a cut pass),
# their logs, env.json (harness.env_probe: versions, driver, SDPA choices), versions.txt (peft, CPU, load),
# nvidia-smi before and after, the checksum. DEADLINE (seconds, default 200): the first pass's case deadline.
set -u
D1=${DEADLINE:-200}
NAME=$1 CASES=$2 EXPECT=$3
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p "$R"
BASE=$(basename "$CASES" -input.jsonl)
Q="name,memory.used,memory.total,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,pstate"
nvidia-smi --query-gpu=$Q --format=csv > "$R/nvidia-smi-before.csv" 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv >> "$R/nvidia-smi-before.csv" 2>&1
(cd "$(dirname "$0")"
 got=$(sha256sum "$CASES" | cut -d' ' -f1)
 if [ "$got" = "$EXPECT" ]; then echo "$got match"; else echo "$got MISMATCH (expected $EXPECT)"; fi |
   tee "$R/cases.sha256"
 { for m in torch torchvision transformers peft; do python3 -c "import $m; print('$m', $m.__version__)"; done
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; free -m | head -2; date -u +%FT%TZ
 } > "$R/versions.txt" 2>&1
 timeout $((D1 + 70)) python3 timing_corpus.py "$CASES" --out "$R/$BASE.jsonl" --env "$R/env.json" --quiet \
   --warmup 2 --steps 4 --timeout 90 --deadline-s "$D1" 2>&1 | tee "$R/$BASE.log" | cut -c1-120
 if [ "${REPEAT:-1}" != 0 ]; then
   timeout 200 python3 timing_corpus.py "$CASES" --out "$R/$BASE-rep.jsonl" --quiet \
     --warmup 2 --steps 4 --timeout 90 --deadline-s 130 2>&1 | tee "$R/$BASE-rep.log" | cut -c1-120
 fi
)
nvidia-smi --query-gpu=$Q --format=csv > "$R/nvidia-smi-after.csv" 2>&1
tar czf "$OUT/$NAME.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
