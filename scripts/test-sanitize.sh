#!/usr/bin/env bash
# The sanitizer job: the test suite built with ASan + UBSan (-DMEMPLAN_SANITIZE=ON) in build-sanitize/, run
# with every report fatal. Separate from build/ so the Release build and its timings are untouched.
#
# Built with clang, where the Release build uses g++: a second compiler's warnings and sanitizers, and compile time
# (CI has 2 cores): clang built this configuration in 845 s summed over the sources (with the engine's precompiled
# header), g++ in 1909 s (without it; the header saves about a third of the engine's 565 s). 2026-12-04, on this
# repository's 2-core machine.
#
# The whole suite (no test asserts wall-clock speed; speed lives in bench/), one shard per core (below). The
# engine and models build at -O1, the CLI and test sources at -O0 (tests/ and cli/ CMakeLists say why).
# MEMPLAN_SANITIZE_TESTS overrides the Catch2 test spec.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --clang
jobs=$(nproc)
# A build-sanitize/ configured with another compiler (g++ before 2026-12-04) is configured afresh.
cache=build-sanitize/CMakeCache.txt
if [ -f "$cache" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$cache"; then rm -rf build-sanitize; fi
# -O1 (the engine and models): compiles faster than -O2 and keeps sanitizer reports readable.
cmake -S . -B build-sanitize -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="-O1 -g1" -DMEMPLAN_SANITIZE=ON -DMEMPLAN_BUILD_BENCH=OFF -DMEMPLAN_BUILD_CALIBRATE=OFF >/dev/null
cmake --build build-sanitize --target memplan_tests memplan -j"$jobs"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
bin=./build-sanitize/tests/memplan_tests
if [ -n "${MEMPLAN_SANITIZE_TESTS:-}" ]; then
  exec "$bin" "$MEMPLAN_SANITIZE_TESTS"
fi
# The suite in four shards per core, test cases dealt round-robin, at most one shard per core running at a time
# and the next shard starting when one ends: a shard's cost is uneven (a few test cases take 10 .. 40 s under the
# sanitizers, most take under a second), so more shards than cores keep both cores busy to the end (two shards had
# run 4.7 and 9 minutes). Catch2 reads each shard's names from a file, one per line, with its spec's special
# characters (\ , [ ] * ~ ") escaped and a leading '-' too, so every name matches itself only.
shards=$(( jobs < 1 ? 4 : (jobs > 8 ? 32 : 4 * jobs) ))
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Catch2 2.x exits with the number of test cases it lists, so the status is not an error here; an empty list is.
{ "$bin" --list-test-names-only || true; } | sed '/^$/d' > "$dir/names"
[ -s "$dir/names" ] || { echo "the sanitized test binary lists no test cases" >&2; exit 1; }
running=0
for ((i = 0; i < shards; ++i)); do
  awk -v n="$shards" -v i="$i" '(NR - 1) % n == i' "$dir/names" |
    sed -e 's/\\/\\\\/g' -e 's/,/\\,/g' -e 's/\[/\\[/g' -e 's/\]/\\]/g' -e 's/\*/\\*/g' -e 's/~/\\~/g' \
        -e 's/"/\\"/g' -e 's/^-/\\-/' > "$dir/shard$i"
  [ -s "$dir/shard$i" ] || { echo 0 > "$dir/rc$i"; continue; }
  { "$bin" -f "$dir/shard$i" > "$dir/log$i" 2>&1; echo $? > "$dir/rc$i"; } &
  if (( ++running >= jobs )); then wait -n || true; running=$((running - 1)); fi
done
wait
status=0
for ((i = 0; i < shards; ++i)); do
  [ -f "$dir/log$i" ] || continue
  if [ "$(cat "$dir/rc$i")" = 0 ]; then tail -n 2 "$dir/log$i"; else status=1; cat "$dir/log$i"; fi
done
[ "$status" -eq 0 ] || exit 1
# Every listed case ran, in exactly one shard: the shards' "All tests passed (... in K test cases)" add up.
total=$(wc -l < "$dir/names")
ran=$(cat "$dir"/log* | sed -n 's/^All tests passed (.* in \([0-9]*\) test cases\?)$/\1/p' | awk '{s += $1} END {print s + 0}')
[ "$ran" -eq "$total" ] || { echo "sanitizer shards ran $ran of $total test cases" >&2; exit 1; }
echo "sanitized suite: $total test cases in $shards shards, all passed"
