#!/usr/bin/env bash
# Held out 4 of the step-time model (issue 17 part 3): the 17 cases of calibrate/cases/timing4-holdout-input.jsonl
# (calibrate/cases/make_timing4.py), whose predictions were committed before any was measured
# (data/validation/predictions/timing4-holdout-round3.json and timing4-holdout-candidate-sums.json (01f8b27)).
#   OUT=dir bash calibrate/runs/timing10_run.sh      (one device call; REPEAT=0: one pass; calibrate/holdout_timing.sh)
exec bash "$(dirname "$0")/../holdout_timing.sh" timing10 cases/timing4-holdout-input.jsonl 1b5e021ed5f14d2bf532129f649054a7b2b981506179b47e7dfed5b434bda322
