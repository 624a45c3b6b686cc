#!/usr/bin/env bash
# Held out 14 after its predictions were committed (issue 17 part 3, ninth session): two passes in one call.
#   OUT=dir bash calibrate/runs/timing33_run.sh     (one device call, ~4 min; $OUT/timing14.tgz)
exec bash "$(dirname "$0")/../holdout_timing.sh" timing14 cases/timing14-holdout-input.jsonl 2ada6ca36aac69864becf71ed92264607e05017b7a0498f93c3c70027517098b
