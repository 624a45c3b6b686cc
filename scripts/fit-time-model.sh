#!/usr/bin/env bash
# Re-fits the step-time coefficients (engine/time/step_time.h) to the measured timing corpus, no GPU needed.
# Usage: scripts/fit-time-model.sh [BUILD_DIR]   (default build/; the memplan binary must be built)
# Writes data/calibration/time-fit-inputs.json (feature rows), time-fit.json (coefficients, residuals per case)
# h200-time-coefficients.tsv and h200-time-bands.tsv (embedded by the engine: rebuild afterwards). Every row is fitted
# (a held-out row once its blind prediction is in data/validation/predictions/); each is also predicted by the fit
# without its set (leave-one-set-out: cv_error_pct), which the bands and tests read.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/cli/memplan
"$bin" calibrate --fit-time data/validation/h200-timing.jsonl --fit-out data/calibration
