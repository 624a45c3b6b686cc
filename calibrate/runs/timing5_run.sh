#!/usr/bin/env bash
# The held-out step-time run of the second set (issue 17 part 3), after its predictions were committed
# (data/validation/predictions/timing2-holdout-at-c26cb67.json):  OUT=dir bash calibrate/runs/timing5_run.sh
# Then ten tuning cases again (run-to-run spread) and host_overhead.py complete. Held-out timings are not
# printed (--quiet); everything is packed into $OUT/timing5.tgz (at most 8 files come back).
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,memory.used,clocks.sm --format=csv > "$R/nvidia-smi.csv" 2>&1
(cd calibrate
 timeout 200 python3 timing_corpus.py cases/timing2-holdout-input.jsonl --out "$R/timing2-holdout.jsonl" --env "$R/env.json" --quiet \
   --warmup 2 --steps 4 --timeout 60 --deadline-s 150 2>&1 | tee "$R/timing2-holdout.log" | cut -c1-120
 # run-to-run spread: ten tuning cases again (ids with -rep), printed
 timeout 90 python3 timing_corpus.py cases/timing-repeat-input.jsonl --out "$R/timing-repeat.jsonl" \
   --warmup 2 --steps 4 --timeout 60 --deadline-s 70 2>&1 | tee "$R/timing-repeat.log" | cut -c1-120
 timeout 90 python3 host_overhead.py "$R/host-overhead.json" 2>&1 | tee "$R/host.log" | tail -3
)
tar czf "$OUT/timing5.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
