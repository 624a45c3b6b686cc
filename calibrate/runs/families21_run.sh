#!/usr/bin/env bash
# Family set 21, tuning rows (seventeenth session: qwen2_vl / qwen2_5_vl, qwen3_vl / qwen3_vl_moe, clip / siglip /
# siglip2, wav2vec2 / hubert / wavlm, mamba / mamba2 and hybrids, glm / helium / hunyuan_v1_moe / dots1 / jetmoe /
# dbrx), each helper's cases collected into cases/families21-input.jsonl (harness plugins of the VLM, contrastive
# and speech families in harness_kinds/), recorded whole-run before the builders are checked against them; the
# transformers 5.17 sources of the new types (modeling, configuration and processor files); what the Python of the
# machine has (mamba_ssm, causal-conv1d ...).
#   OUT=dir bash calibrate/runs/families21_run.sh   ($OUT/families21.tgz, $OUT/sources21.tgz, $OUT/probe.txt)
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
(cd "$here"
 { for m in torch torchvision transformers peft; do python3 -c "import $m; print('$m', $m.__version__)"; done
   for m in fla causal_conv1d mamba_ssm flash_attn kernels torchaudio librosa; do python3 -c "import $m; print('$m present', getattr($m, '__version__', '?'))" 2>&1 | tail -1; done
   python3 -c "
from transformers.utils import import_utils as u
for n in ['is_flash_linear_attention_available','is_causal_conv1d_available','is_mamba_ssm_available','is_mamba_2_ssm_available','is_kernels_available','is_torchvision_available']:
    f = getattr(u, n, None); print(n, f() if f else 'absent')"
   python3 -c "import sys; sys.path.insert(0, '.'); import harness_kinds; print('harness plugins:', harness_kinds.model_types())"
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; nvidia-smi --query-gpu=name,memory.used,driver_version --format=csv; } > "$OUT/probe.txt" 2>&1
 python3 dump_sources.py "$OUT/sources21.tgz" qwen2_vl qwen2_5_vl qwen3_vl qwen3_vl_moe clip siglip siglip2 wav2vec2 \
   hubert wavlm mamba mamba2 falcon_h1 granitemoehybrid nemotron_h bamba jamba glm helium hunyuan_v1_moe dots1 jetmoe \
   dbrx llava > "$OUT/sources.log" 2>&1
)
work=$(mktemp -d)
timeout ${BUDGET_S:-400} python3 "$here/record_cases_budget.py" "$here/cases/families21-input.jsonl" "$work/families21" \
  --jobs 8 --budget-gib 125 --timeout 300 > "$OUT/progress.log" 2>&1
cp "$work/families21/log" "$OUT/record.log" 2>/dev/null
tar -C "$work" -czf "$OUT/families21.tgz" families21
tail -60 "$OUT/progress.log"; cat "$OUT/probe.txt"
# Then, alone on the GPU: one profiled step of Qwen3.5 (4 layers) amp b1 s4096 with and without checkpointing
# (held-out timing row ht23-q35-ampbf16-b1s4096-ckpt read +22.7 %: where does the recompute's time go).
(cd "$here" && timeout ${PROFILE_S:-100} python3 step_profile.py cases/profile21-input.jsonl --out "$OUT/profile21.json" \
  --timeout 45 > "$OUT/profile21.log" 2>&1; tail -5 "$OUT/profile21.log")
