#!/usr/bin/env bash
# Held out 3 of the step-time model (issue 17 part 3): the 18 cases of calibrate/cases/timing3-holdout-input.jsonl
# (calibrate/cases/make_timing3.py), whose predictions were committed before any was measured
# (data/validation/predictions/timing3-holdout-at-650648d.json (commit d56bf7d)).
#   OUT=dir bash calibrate/runs/timing7_run.sh      (one device call; REPEAT=0: one pass; calibrate/holdout_timing.sh)
exec bash "$(dirname "$0")/../holdout_timing.sh" timing7 cases/timing3-holdout-input.jsonl 50a512ae9dac731d842bb9fcd5e5ec1a1b9ce1b9ad8a39a576a28496023d2ff7
