#!/usr/bin/env bash
# Held out 6 of the step-time model (issue 17 part 3): the 16 cases of calibrate/cases/timing6-holdout-input.jsonl
# (calibrate/cases/make_timing6.py), whose predictions under three models were committed before any was measured
# (data/validation/predictions/timing6-holdout.json (60937e1)).
#   OUT=dir bash calibrate/runs/timing13_run.sh      (one device call; REPEAT=0: one pass; calibrate/holdout_timing.sh)
exec bash "$(dirname "$0")/../holdout_timing.sh" timing13 cases/timing6-holdout-input.jsonl 7ebdd8a71274508c937c7a4381f55b5d44c10628c4fda12481f19d03639cffa3
