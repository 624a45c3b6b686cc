#!/usr/bin/env bash
# Held out 7 of the step-time model (issue 17 part 3): the 14 cases of calibrate/cases/timing7-holdout-input.jsonl
# (calibrate/cases/make_timing7.py), whose predictions were committed before any was measured
# (data/validation/predictions/timing7-holdout.json).
#   OUT=dir bash calibrate/runs/timing17_run.sh      (one device call; REPEAT=0: one pass; calibrate/holdout_timing.sh)
exec bash "$(dirname "$0")/../holdout_timing.sh" timing17 cases/timing7-holdout-input.jsonl 8b45900521c164f0efa55de39ff01170832b6fca88f58b82e8d9d0b93d08f80b
