#!/usr/bin/env bash
# The step-time model's tables for any CUDA GPU (engine/time/step_time.h LoadedRates), for `memplan estimate / fit
# --time-tables DIR`. Needs PyTorch (and torchvision for the conv and batch-norm shapes) on the GPU's machine.
#   bash calibrate/time_tables.sh measure RAW      # ~10 min, nothing else on the GPU: every microbenchmark -> RAW/
#   bash calibrate/time_tables.sh reduce RAW DIR   # no GPU: RAW/ -> DIR/op-rates.tsv, conv-time.tsv, bn-time.tsv,
#                                                  # gemm-align.tsv (what --time-tables reads)
# The host's tables (host_overhead.py, ckpt_host.py) are measured too but not reduced: the engine prices the host
# with the reference host's (data/calibration/h100/README.md says why). The H100's tables in data/calibration/h100/
# came from the same scripts (runs/h100_calib_run.sh, h100_bn_run.sh) and the same reductions.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:?measure RAW | reduce RAW DIR}
raw=${2:?RAW directory}
case "$cmd" in
measure)
  mkdir -p "$raw"
  raw=$(cd "$raw" && pwd)
  export PYTHONUNBUFFERED=1
  cd "$here"
  nvidia-smi --query-gpu=name,memory.used,clocks.sm,clocks.max.sm,driver_version --format=csv > "$raw/nvidia-smi.csv" 2>&1
  run() {  # name timeout_s script args...
    local n=$1 t=$2; shift 2
    timeout "$t" python3 "$@" > "$raw/$n.log" 2>&1
    echo "$n rc=$?" | tee -a "$raw/summary.txt"
  }
  run op_rates 300 op_rates.py "$raw/op-rates.json"
  run gemm_align 120 gemm_align.py "$raw/gemm-align.json"
  run sdpa_short 120 sdpa_short.py "$raw/sdpa-short.json"
  run sdpa_headdim 160 sdpa_headdim.py "$raw/sdpa-headdim.json"
  run sdpa_masked 120 sdpa_masked.py "$raw/sdpa-masked.json"
  run norm_reduce 160 norm_reduce.py "$raw/norm-reduce.json"
  run mixed_dtype 80 mixed_dtype.py "$raw/mixed-dtype.json"
  run elementwise_layout 100 elementwise_layout.py "$raw/elementwise-layout.json"
  run moe_attn 160 moe_attn_kernels.py "$raw/moe-attn-kernels.json"
  run moe_odd 80 moe_odd_kernels.py "$raw/moe-odd-kernels.json"
  run ckpt_host 80 ckpt_host.py "$raw/ckpt-host.json"
  run host_overhead 180 host_overhead.py "$raw/host-overhead.json"
  run bn_time 240 bn_time.py "$raw/bn-time.json"
  run conv_time 900 conv_time.py "$raw/conv-time.json" --dtypes=bf16,fp32
  ;;
reduce)
  dir=${3:?DIR}
  mkdir -p "$dir"
  extra=()
  for x in sdpa-short sdpa-headdim sdpa-masked norm-reduce mixed-dtype moe-odd-kernels moe-attn-kernels elementwise-layout; do
    [ -f "$raw/$x.json" ] && extra+=(--extra "$raw/$x.json")
  done
  python3 "$here/op_rates.py" --table "$raw/op-rates.json" "$dir/op-rates.tsv" "${extra[@]}" || exit 2
  [ -f "$raw/conv-time.json" ] && python3 "$here/conv_time.py" --table "$raw/conv-time.json" "$dir/conv-time.tsv"
  [ -f "$raw/bn-time.json" ] && python3 "$here/bn_time.py" --table "$raw/bn-time.json" "$dir/bn-time.tsv"
  [ -f "$raw/gemm-align.json" ] && python3 "$here/gemm_align.py" --table "$raw/gemm-align.json" "$dir/gemm-align.tsv"
  ls "$dir"
  ;;
*) echo "usage: time_tables.sh measure RAW | reduce RAW DIR" >&2; exit 2 ;;
esac
