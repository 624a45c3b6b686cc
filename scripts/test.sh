#!/usr/bin/env bash
# Builds everything and runs all tests (the Catch2 suite and the Python module's tests, both from ctest).
# Installs missing Debian packages first when run as root. The Python module is required here, so a CI image
# without pybind11 fails loudly instead of skipping its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMPLAN_BUILD_PYTHON=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
