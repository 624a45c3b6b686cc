#!/usr/bin/env bash
# Builds memplan-calibrate on a GPU machine from calibrate/ alone (only the CUDA toolkit is needed) and runs it.
# Usage (repo root): calibrate/device_run.sh OUT_DIR [fallback-binary]
# Writes OUT_DIR/profile.json, OUT_DIR/calibrate.log, OUT_DIR/build.log. If the build fails and a fallback
# binary (built elsewhere) is given, that one runs instead.
set -u -o pipefail
out=${1:?usage: device_run.sh OUT_DIR [fallback-binary]}
fallback=${2:-}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,memory.used,clocks.sm,clocks.mem,driver_version --format=csv \
  >"$out/nvidia-smi.csv" 2>&1 || true
bin=""
if cmake -S calibrate -B /tmp/memplan-cal -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/build.log" 2>&1 &&
   cmake --build /tmp/memplan-cal >>"$out/build.log" 2>&1; then
  bin=/tmp/memplan-cal/memplan-calibrate
elif [ -n "$fallback" ] && [ -x "$fallback" ]; then
  echo "build failed (see build.log); running fallback $fallback" >&2
  bin=$fallback
else
  echo "build failed:" >&2; tail -30 "$out/build.log" >&2; exit 1
fi
"$bin" --out "$out/profile.json" 2> >(tee "$out/calibrate.log" >&2)
rc=$?
nvidia-smi --query-gpu=memory.used,clocks.sm --format=csv >>"$out/nvidia-smi.csv" 2>&1 || true
exit $rc
