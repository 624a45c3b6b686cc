#!/usr/bin/env bash
# Family set 19, tuning rows (sixteenth session: gemma4_text, qwen3_next / qwen3_5_text / qwen3_5_moe_text,
# mistral4, ministral3, minimax_m2, lfm2_moe; encoder and vision inference), each helper's cases collected into
# cases/families19-input.jsonl, recorded whole-run before the builders are checked against them; the transformers
# 5.17 sources of the new types; what the Python of the machine has (flash-linear-attention, causal-conv1d).
#   OUT=dir bash calibrate/runs/families19_run.sh   ($OUT/families19.tgz, $OUT/sources19b.tgz, $OUT/probe.txt)
set -u
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")/.." && pwd)
(cd "$here"
 { for m in torch torchvision transformers peft; do python3 -c "import $m; print('$m', $m.__version__)"; done
   for m in fla causal_conv1d mamba_ssm flash_attn kernels; do python3 -c "import $m; print('$m present', getattr($m, '__version__', '?'))" 2>&1 | tail -1; done
   python3 -c "
from transformers.utils import import_utils as u
for n in ['is_flash_linear_attention_available','is_causal_conv1d_available','is_mamba_ssm_available','is_kernels_available']:
    f = getattr(u, n, None); print(n, f() if f else 'absent')"
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; nvidia-smi --query-gpu=name,memory.used,driver_version --format=csv; } > "$OUT/probe.txt" 2>&1
 python3 dump_sources.py "$OUT/sources19b.tgz" gemma4 qwen3_5 qwen3_5_moe qwen3_next mistral4 ministral3 mistral3 \
   minimax_m2 lfm2_moe lfm2 pixtral > "$OUT/sources.log" 2>&1
)
work=$(mktemp -d)
timeout 470 python3 "$here/record_cases_budget.py" "$here/cases/families19-input.jsonl" "$work/families19" --jobs 8 \
  --budget-gib 125 --timeout 330 > "$OUT/progress.log" 2>&1
cp "$work/families19/log" "$OUT/record.log" 2>/dev/null
tar -C "$work" -czf "$OUT/families19.tgz" families19
tail -60 "$OUT/progress.log"; cat "$OUT/probe.txt"
