#!/usr/bin/env bash
# Installs the Debian packages memplan builds against, when any is missing. No other downloads.
#   scripts/install-deps.sh           the main build (g++)
#   scripts/install-deps.sh --clang   clang and its sanitizer runtimes on top (the sanitizer job, fuzz/)
#   scripts/install-deps.sh --fuzz    the same (libclang_rt.fuzzer is in the same runtime package)
set -euo pipefail

install_missing() {
  local missing=""
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  if [ -n "$missing" ]; then
    echo "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq $missing >/dev/null
  fi
}

# pybind11-dev and python3-dev build the Python module (python/); python3-dev brings Debian's /usr/bin/python3.
install_missing g++ cmake ninja-build libeigen3-dev nlohmann-json3-dev libcli11-dev catch2 libbenchmark-dev \
  pybind11-dev python3-dev
if [ "${1:-}" = "--clang" ] || [ "${1:-}" = "--fuzz" ]; then
  install_missing clang
  # libclang-rt-N-dev ships the asan/ubsan runtimes and libclang_rt.fuzzer for clang N; match the installed one.
  clang_major=$(clang++ --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  install_missing "libclang-rt-${clang_major}-dev"
fi
