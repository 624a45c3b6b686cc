#!/usr/bin/env bash
# Installs what is missing, builds memplan and its Python module (build/python: PYTHONPATH=build/python
# python3 -c "import memplan") and runs the main job on the embedded default: "fine-tune Llama-2-7B in bf16
# with AdamW on a 24 GB GPU (RTX 4090)": the verdict, the ledger, and what to change in order (`memplan fit`).
# Extra arguments replace the default job, e.g. ./scripts/run.sh estimate --model gpt2 --batch-size 8 --gpu h200
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DMEMPLAN_BUILD_PYTHON=ON >/dev/null
cmake --build build -j"$(nproc)" --target memplan memplan_python
if [ "$#" -eq 0 ]; then
  set -- fit --model llama-2-7b --precision bf16 --batch-size 1 --seq-len 2048 --optimizer adamw --gpu rtx-4090
fi
exec ./build/cli/memplan "$@"
