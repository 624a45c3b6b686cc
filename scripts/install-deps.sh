#!/usr/bin/env bash
# Installs the Debian packages memplan builds against, when any is missing. No other downloads.
set -euo pipefail
pkgs="g++ cmake ninja-build libeigen3-dev nlohmann-json3-dev libcli11-dev catch2 libbenchmark-dev"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq $missing >/dev/null
fi
