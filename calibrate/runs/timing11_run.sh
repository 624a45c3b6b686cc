#!/usr/bin/env bash
# Held out 5 of the step-time model (issue 17 part 3): the 13 cases of calibrate/cases/timing5-holdout-input.jsonl
# (calibrate/cases/make_timing5.py), whose predictions were committed before any was measured
# (data/validation/predictions/timing5-holdout.json (555ca90)).
#   OUT=dir bash calibrate/runs/timing11_run.sh      (one device call; REPEAT=0: one pass; calibrate/holdout_timing.sh)
exec bash "$(dirname "$0")/../holdout_timing.sh" timing11 cases/timing5-holdout-input.jsonl b4660dafb4b6d158cf18b7d808d4d264d2cc73a658f0adbf7aace4e95ef8695e
