#!/usr/bin/env bash
# Profiles of held out 6's GPU-bound misses, after the set was measured (issue 17 part 3, sixth session):
# Phi-3-mini bf16 checkpointed b1 s4096 (-25 %), ViT-B/16 amp b192 and ConvNeXt-T amp b192 (-15 %, -16 %).
#   OUT=dir bash calibrate/runs/timing14_run.sh        (one device call, ~1 min; packed into $OUT/timing14.tgz)
set -u
export PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p "$R"
(cd calibrate
 { for m in torch torchvision transformers; do python3 -c "import $m; print('$m', $m.__version__)"; done
   nproc; grep -m1 "model name" /proc/cpuinfo; cat /proc/loadavg; date -u +%FT%TZ; } > "$R/versions.txt" 2>&1
 python3 - > "$R/sdpa-hd96.txt" 2>&1 <<'PY'
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F
q = torch.randn(1, 32, 4096, 96, device="cuda", dtype=torch.bfloat16, requires_grad=True)
for b in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION):
    try:
        with sdpa_kernel([b]):
            F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
        print(b, "ok")
    except Exception as e:
        print(b, "refused", str(e)[:200])
PY
 timeout 200 python3 step_profile.py cases/profile5-input.jsonl --out "$R/step-profiles-5.json" --timeout 90 \
   --deadline-s 190 2>&1 | grep -v "^\[transformers\]" | tee "$R/step-profiles-5.log" | cut -c1-160
)
tar czf "$OUT/timing14.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
