#!/usr/bin/env bash
# Family set 23, tuning rows (eighteenth session: granitemoehybrid / bamba, falcon_h1 / nemotron_h, jamba, llava /
# paligemma, idefics3 / smolvlm, convnext / convnextv2 / swin and what the helpers reached of their stretch types),
# each helper's cases collected into cases/families23-input.jsonl (harness plugins in harness_kinds/), recorded
# whole-run before the builders are checked against them; what the Python of the machine has. Then the seven rows
# of the sixteenth session's final call that never ran (predicted at 012ed99), with a longer timeout; then, alone on
# the GPU, one profiled step with op shapes of four held-out set-24 timing misses (HuBERT-large CTC, Qwen2.5-VL
# with images, JetMoE, Qwen3-VL-MoE).
#   OUT=dir bash calibrate/runs/families23_run.sh   ($OUT/families23.tgz, $OUT/probe.txt, $OUT/f20left.jsonl,
#                                                    $OUT/profile25.json)
set -u
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
here=$(cd "$(dirname "$0")/.." && pwd)
(cd "$here"
 { for m in torch torchvision transformers peft timm; do python3 -c "import $m; print('$m', $m.__version__)"; done
   for m in fla causal_conv1d mamba_ssm flash_attn kernels; do python3 -c "import $m; print('$m present', getattr($m, '__version__', '?'))" 2>&1 | tail -1; done
   python3 -c "import sys; sys.path.insert(0, '.'); import harness_kinds; print('harness plugins:', harness_kinds.model_types())"
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; nvidia-smi --query-gpu=name,memory.used,driver_version --format=csv; } > "$OUT/probe.txt" 2>&1
)
work=$(mktemp -d)
timeout ${BUDGET_S:-330} python3 "$here/record_cases_budget.py" "$here/cases/families23-input.jsonl" "$work/families23" \
  --jobs 8 --budget-gib 125 --timeout 240 > "$OUT/progress.log" 2>&1
cp "$work/families23/log" "$OUT/record.log" 2>/dev/null
tar -C "$work" -czf "$OUT/families23.tgz" families23
tail -45 "$OUT/progress.log" | cut -c1-160
(cd "$here" && OMP_NUM_THREADS=2 timeout ${T20:-130} python3 harness.py cases/families20-left2-input.jsonl \
   --out "$OUT/f20left.jsonl" --env "$OUT/env-f20left.json" --jobs 8 --mem-budget-gib 128 --timeout $(( ${T20:-130} - 10 )) 2>&1 |
   grep -v "^\[transformers\]" > "$OUT/f20left.log"; tail -8 "$OUT/f20left.log" | cut -c1-150)
(cd "$here" && timeout ${PROFILE_S:-110} python3 step_profile.py cases/profile25-input.jsonl --out "$OUT/profile25.json" \
  --timeout 50 --shapes > "$OUT/profile25.log" 2>&1; tail -5 "$OUT/profile25.log" | cut -c1-200)
