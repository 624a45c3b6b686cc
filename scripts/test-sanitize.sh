#!/usr/bin/env bash
# The sanitizer job: the test suite built with ASan + UBSan (-DMEMPLAN_SANITIZE=ON) in build-sanitize/, run
# with every report fatal. Separate from build/ so the Release build and its timings are untouched.
#
# The whole suite (no test asserts wall-clock speed; speed lives in bench/). It takes ~40 s sanitized on 2 cores,
# the sanitized build ~6 min (650 s of CPU at -O1), inside CI's 15 minutes with the Release build and suite.
# MEMPLAN_SANITIZE_TESTS overrides the Catch2 test spec.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
jobs=$(nproc)
# -O1: compiles faster than -O2 and keeps sanitizer reports readable; the tests still run in seconds.
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g1" -DMEMPLAN_SANITIZE=ON \
  -DMEMPLAN_BUILD_BENCH=OFF -DMEMPLAN_BUILD_CALIBRATE=OFF >/dev/null
cmake --build build-sanitize --target memplan_tests memplan -j"$jobs"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
./build-sanitize/tests/memplan_tests ${MEMPLAN_SANITIZE_TESTS:+"$MEMPLAN_SANITIZE_TESTS"}
