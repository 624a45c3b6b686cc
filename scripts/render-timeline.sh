#!/usr/bin/env bash
# Renders a memplan timeline SVG to PNG to check it draws (librsvg, a Debian package), e.g.
#   ./build/cli/memplan estimate --model gpt2 --batch-size 8 --seq-len 1024 --timeline /tmp/t.svg
#   ./scripts/render-timeline.sh /tmp/t.svg /tmp/t.png
set -euo pipefail
command -v rsvg-convert >/dev/null || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq librsvg2-bin >/dev/null; }
rsvg-convert -w 1400 "$1" -o "${2:-${1%.svg}.png}"
