#!/usr/bin/env bash
# Builds one libFuzzer target and runs it for SECONDS (fuzz/README.md).
#   scripts/fuzz.sh TARGET SECONDS     TARGET: hf_config | validation_case | oom_message | gpu_specs |
#                                              calibration_profile | cli | native_graph | time_tables
#                                              (with or without the fuzz_ prefix)
# Build: build-fuzz/ (clang, -fsanitize=fuzzer,address,undefined). Seeds: real files from data/, models/zoo/,
# fuzz/seeds/ and fuzz/regressions/<target>/; the growing corpus stays in build-fuzz/corpus/<target>/.
# Findings land in build-fuzz/artifacts/<target>/; the script exits 1 when there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
[ $# -eq 2 ] || { echo "usage: scripts/fuzz.sh TARGET SECONDS" >&2; exit 64; }
name=${1#fuzz_}
secs=$2
target=fuzz_$name
[ -f "fuzz/$target.cpp" ] || { echo "unknown target '$1'; see fuzz/README.md" >&2; exit 64; }

# FUZZ_SKIP_BUILD=1: use the targets already in build-fuzz/ (to run several targets at once after one
# `cmake --build build-fuzz --target memplan_fuzz`, since two builds must not share build-fuzz/).
if [ -z "${FUZZ_SKIP_BUILD:-}" ]; then
  if [ "$(id -u)" = 0 ]; then ./scripts/install-deps.sh --fuzz; fi
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DMEMPLAN_BUILD_FUZZ=ON -DMEMPLAN_BUILD_TESTS=OFF -DMEMPLAN_BUILD_BENCH=OFF -DMEMPLAN_BUILD_CALIBRATE=OFF >/dev/null
  cmake --build build-fuzz --target "$target" -j"${FUZZ_BUILD_JOBS:-2}"
fi

seeds=build-fuzz/seeds/$name
corpus=build-fuzz/corpus/$name
artifacts=build-fuzz/artifacts/$name
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$artifacts" "fuzz/regressions/$name"
dict=fuzz/json.dict
case $name in
  hf_config) cp models/zoo/*.json "$seeds"/ ;;
  validation_case)
    # One case per file, every 7th line of the measured corpora and the harness inputs.
    i=0
    for f in data/validation/*.jsonl calibrate/cases/*.jsonl; do
      while IFS= read -r line; do
        [ -n "$line" ] && [ $((i % 7)) -eq 0 ] && printf '%s' "$line" > "$seeds/case$i.json"
        i=$((i + 1))
      done < "$f"
    done ;;
  oom_message) cp fuzz/seeds/oom_message/* "$seeds"/; dict=fuzz/oom.dict ;;
  gpu_specs) cp data/gpus.json "$seeds"/ ;;
  calibration_profile) cp data/calibration/*.json "$seeds"/ ;;
  cli) cp fuzz/seeds/cli/* "$seeds"/; dict=fuzz/cli.dict ;;
  native_graph) cp models/examples/*.json "$seeds"/; dict=fuzz/native.dict ;;
  time_tables)  # the tables' own first lines (whole files are large), one file each
    for t in conv-time bn-time op-rates host-overhead gemm-align time-coefficients time-bands; do
      head -40 "data/calibration/h200-$t.tsv" > "$seeds/$t.tsv"
    done
    { head -20 data/calibration/h200-cudnn-conv-workspace.tsv; grep -m 20 ' nhwc$' data/calibration/h200-cudnn-conv-workspace.tsv; } \
      > "$seeds/cudnn-conv-workspace.tsv" ;;
esac

# libFuzzer with -jobs=1 runs one worker that logs to fuzz-0.log in the working directory.
run=build-fuzz/run/$name
mkdir -p "$run"
(cd "$run" && "$root/build-fuzz/fuzz/$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -jobs=1 \
  -print_final_stats=1 -dict="$root/$dict" -artifact_prefix="$root/$artifacts/" \
  "$root/$corpus" "$root/$seeds" "$root/fuzz/regressions/$name" </dev/null) || true
log=$run/fuzz-0.log
grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units_added)' "$log" || tail -30 "$log"
found=$(find "$artifacts" -type f | wc -l)
echo "$target: $found finding(s) in $artifacts"
[ "$found" -eq 0 ]
