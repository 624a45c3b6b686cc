#!/usr/bin/env python3
"""SDPA rates with an explicit mask (issue 17 part 3): what attention runs at when transformers passes a mask.

Why: Phi-3-mini (sliding_window 2047) trained at s4096 (held out 6, 2026-12-02) ran 0.77 ms of forward and
2.24 ms of backward attention kernels per layer in its profiled step; the same shape timed alone with is_causal
(calibrate/timing15_run.sh) took 0.26 and 0.74. With a sliding window (or padding) transformers hands SDPA a
boolean mask instead of is_causal, SDPA turns it into an additive bias, and the fused kernel computes every
score block (no causal skipping) and reads the bias.

What: forward and forward + backward of F.scaled_dot_product_attention(q, k, v, attn_mask=M) with M a boolean
[B, 1, S, S] sliding-window causal mask (window S / 2, as a mask of any pattern costs the same: the kernel skips
nothing), bf16 (and fp16 at head dim 64 / 128), head dim 64 / 96 / 128 / 256, S = 512 .. 4096, B = 16384 / S,
H = 16, default backend. FLOPs counted as op_rates.sdpa_rate counts a non-causal call (4 B H S^2 D; backward 2.5x).

    python3 calibrate/sdpa_masked.py OUT.json          (GPU machine, ~1 min)
Merged into data/calibration/h200-op-rates.tsv as `sdpa_masked` rows by `op_rates.py --table ... --extra OUT.json`.
"""
import json
import sys
import time

import op_rates


def masked_rate(name, dt, d, s_, B, H):
    import torch
    import torch.nn.functional as F
    q, k, v = (torch.randn(B, H, s_, d, device="cuda", dtype=dt, requires_grad=True) for _ in range(3))
    g = torch.randn(B, H, s_, d, device="cuda", dtype=dt)
    i = torch.arange(s_, device="cuda")
    m = ((i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - s_ // 2)).expand(B, 1, s_, s_)

    def fwd():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, attn_mask=m)

    def fb():
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
        torch.autograd.grad(o, (q, k, v), g)

    tf = op_rates.timed(fwd, reps=3)
    tfb = op_rates.timed(fb, reps=3)
    fl = 4.0 * B * H * s_ * s_ * d
    return {"dtype": name, "d": d, "s": s_, "b": B, "h": H, "masked": True,
            "fwd_ms": round(tf * 1e3, 4), "fwd_bwd_ms": round(tfb * 1e3, 4),
            "fwd_tflops": round(fl / tf / 1e12, 2), "bwd_tflops": round(2.5 * fl / max(tfb - tf, 1e-9) / 1e12, 2)}


def main():
    import torch
    torch.cuda.init()
    rows = []
    plan = [("bf16", torch.bfloat16, d, s_) for d in (64, 96, 128, 256) for s_ in (512, 1024, 2048, 4096)]
    plan += [("fp16", torch.float16, d, s_) for d in (64, 128) for s_ in (1024, 4096)]
    t0 = time.time()
    for name, dt, d, s_ in plan:
        try:
            rows.append(masked_rate(name, dt, d, s_, max(1, 16384 // s_), 16))
        except Exception as e:  # noqa: BLE001
            print("[sdpa_masked] %s d%d s%d FAILED: %s" % (name, d, s_, e), flush=True)
            continue
        print("[sdpa_masked] %s d%d s%d: fwd %.1f bwd %.1f TFLOP/s" % (
            name, d, s_, rows[-1]["fwd_tflops"], rows[-1]["bwd_tflops"]), flush=True)
        torch.cuda.empty_cache()
    json.dump({"schema": "memplan-sdpa-masked/1", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "wall_s": round(time.time() - t0, 1),
               "flops_note": "4 B H S^2 D (no causal halving: the masked kernel computes every block); bwd 2.5 x fwd",
               "rows": rows}, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
