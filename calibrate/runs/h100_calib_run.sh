#!/usr/bin/env bash
# The step-time model's microbenchmarks on an H100 (thirtieth session): every table the engine embeds for the H200
# (op rates and their extras, the GEMM alignment cap, checkpointing's and the modules' host costs, batch-norm and
# convolution times per shape), measured again on the lent H100 so the engine can cost a step there. One device call,
# nothing else on the GPU; each script under its own timeout, most important first; the conv table last, cut at
# the call's remaining time (bf16 first, then fp32).
#   OUT=dir bash calibrate/runs/h100_calib_run.sh      ($OUT/h100-calib.tgz)
set -u
cd calibrate
d="$OUT/h100-calib"; mkdir -p "$d"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.used,utilization.gpu,clocks.sm,clocks.max.sm,driver_version --format=csv > "$d/nvidia-smi.csv" 2>&1
lscpu > "$d/lscpu.txt" 2>&1
python3 -c "import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.get_device_name())" > "$d/versions.txt" 2>&1
run() {  # name timeout_s args...
  local n=$1 t=$2; shift 2
  local t0=$SECONDS
  timeout "$t" python3 "$@" > "$d/$n.log" 2>&1
  echo "$n rc=$? $((SECONDS - t0)) s" | tee -a "$d/summary.txt"
}
run op_rates 120 op_rates.py "$d/op-rates.json"
run gemm_align 60 gemm_align.py "$d/gemm-align.json"
run sdpa_short 60 sdpa_short.py "$d/sdpa-short.json"
run sdpa_headdim 80 sdpa_headdim.py "$d/sdpa-headdim.json"
run sdpa_masked 60 sdpa_masked.py "$d/sdpa-masked.json"
run norm_reduce 80 norm_reduce.py "$d/norm-reduce.json"
run mixed_dtype 40 mixed_dtype.py "$d/mixed-dtype.json"
run elementwise_layout 50 elementwise_layout.py "$d/elementwise-layout.json"
run moe_attn 80 moe_attn_kernels.py "$d/moe-attn-kernels.json"
run moe_odd 40 moe_odd_kernels.py "$d/moe-odd-kernels.json"
run ckpt_host 40 ckpt_host.py "$d/ckpt-host.json"
run host_overhead 90 host_overhead.py "$d/host-overhead.json"
run bn_time 45 bn_time.py "$d/bn-time.json" --deadline-s=35
left=$(( ${BUDGET_S:-570} - SECONDS - 40 ))
if [ "$left" -gt 20 ]; then
  run conv_time $((left + 30)) conv_time.py "$d/conv-time.json" --dtypes=bf16,fp32 --deadline-s=$left
fi
nvidia-smi --query-gpu=memory.used,clocks.sm --format=csv >> "$d/nvidia-smi.csv" 2>&1
tar czf "$OUT/h100-calib.tgz" -C "$OUT" h100-calib
