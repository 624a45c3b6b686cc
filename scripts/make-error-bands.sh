#!/usr/bin/env bash
# Usage: scripts/make-error-bands.sh [MEMPLAN]   (default: build/cli/memplan)
# Regenerates data/validation/error-bands.tsv, the verdict's error bands (engine/verdict.h): every measured
# validation case is predicted by the given memplan, and per class of comparable configurations the largest under-
# and over-prediction of peak reserved memory is written, together with the errors the earlier predictions in
# data/validation/predictions/ (made before those cases were measured) had. Rebuild afterwards: the table is
# compiled into the engine (engine/CMakeLists.txt). The table changes no prediction, only the bands, so running it
# twice gives the same file.
set -euo pipefail
cd "$(dirname "$0")/.."
B="${1:-build/cli/memplan}"
files=(data/validation/h200-public-cases.jsonl data/validation/h200-corpus.jsonl data/validation/h200-boundary.jsonl
       data/validation/h200-families.jsonl data/validation/h200-odd-shapes.jsonl data/validation/h200-distributed.jsonl
       data/validation/h100-families.jsonl)
priors=()
for p in data/validation/predictions/*.json; do priors+=(--prior "$p"); done
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
cat "${files[@]}" | "$B" validate - --error-bands "${priors[@]}" > "$tmp"
# The sources line names the files rather than stdin.
sed -i "s|^# Sources: -\$|# Sources: ${files[*]}; earlier predictions: data/validation/predictions/*.json|" "$tmp"
mv "$tmp" data/validation/error-bands.tsv
trap - EXIT
echo "wrote data/validation/error-bands.tsv ($(grep -vc '^#' data/validation/error-bands.tsv) lines)"
