#!/usr/bin/env bash
# SDPA at head dims 80 / 96 / 192 / 256 (calibrate/sdpa_headdim.py), and Phi-3-mini's own attention shape
# ([1, 32, 4096, 96], q / k / v as transposed views of [B, S, H, D], causal) timed the same way, against its
# profiled step's kernels (held out 6: 0.77 ms forward, 2.24 ms backward per layer).
#   OUT=dir bash calibrate/runs/timing15_run.sh        (one device call, ~1.5 min; $OUT/h200-sdpa-headdim.json)
set -u
export PYTHONUNBUFFERED=1
cd calibrate
timeout 240 python3 sdpa_headdim.py "$OUT/h200-sdpa-headdim.json" 2>&1 | tail -70
timeout 60 python3 - <<'PY' 2>&1 | tee "$OUT/phi3-shape.txt"
import torch, torch.nn.functional as F, op_rates
B, H, S, D = 1, 32, 4096, 96
def mk():
    return torch.randn(B, S, H, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2).requires_grad_(True)
q, k, v = mk(), mk(), mk()
g = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
def fwd():
    with torch.no_grad():
        F.scaled_dot_product_attention(q, k, v, is_causal=True)
def fb():
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.autograd.grad(o, (q, k, v), g)
tf, tfb = op_rates.timed(fwd, reps=3), op_rates.timed(fb, reps=3)
print("phi3 shape transposed views: fwd %.3f ms, fwd+bwd %.3f ms, bwd %.3f ms" % (tf * 1e3, tfb * 1e3, (tfb - tf) * 1e3))
r = op_rates.sdpa_rate("bf16", torch.bfloat16, 96, 4096, True, 1, 32)
print("phi3 shape contiguous: fwd %.3f ms, fwd+bwd %.3f ms" % (r["fwd_ms"], r["fwd_bwd_ms"]))
PY
ls -la "$OUT"
