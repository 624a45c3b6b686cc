#!/usr/bin/env python3
"""Two kernel families the step-time model had no measured rate for (issue 17 part 3, eighth session):

1. torch._grouped_mm as transformers' default experts implementation runs it (integrations/moe.py
   grouped_mm_experts_forward: the routed rows sorted by expert, x [R, K] against the experts' weight [E, N, K]
   transposed, int32 cumulative offsets), forward and forward + backward, at the expert shapes of the zoo's MoE
   models and of the held-out cases. Rows per expert are uniform random routing's (R = T x top-k rows split by a
   multinomial draw), as a freshly initialised router sends them. FLOPs: 2 R K N forward; backward 2x that
   (grad input and grad weight).
2. SDPA with dropout (transformers passes dropout_p = attention_dropout while training: GPT-2, BERT, StarCoder2
   0.1), causal and with a boolean mask, against the same call at p = 0, at the shapes those models train.

    python3 calibrate/moe_attn_kernels.py OUT.json          (GPU machine, ~1 min)
Rows: {"kind": "grouped_mm", dtype, E, K, N, R, fwd_ms, fwd_bwd_ms, fwd_tflops, bwd_tflops} and
{"kind": "sdpa_dropout", dtype, b, h, s, d, causal, masked, p, fwd_ms, fwd_bwd_ms}.
"""
import json
import sys
import time

import op_rates


def routed_operands(torch, E, K, N, T, top_k, dt):
    """The operands of one grouped_mm as transformers' experts run it: R = T x top_k rows split over E experts by a
    uniform random router (seeded), their int32 cumulative offsets, x [R, K], the weight [E, N, K], an output
    gradient [R, N]. Returns (R, counts, offs, x, w, go)."""
    R = T * top_k
    g = torch.Generator(device="cpu").manual_seed(0)
    counts = torch.bincount(torch.randint(0, E, (R,), generator=g), minlength=E)
    offs = torch.cumsum(counts, 0).to(torch.int32).cuda()
    x = torch.randn(R, K, device="cuda", dtype=dt, requires_grad=True)
    w = torch.randn(E, N, K, device="cuda", dtype=dt, requires_grad=True)
    go = torch.randn(R, N, device="cuda", dtype=dt)
    return R, counts, offs, x, w, go


def grouped_row(torch, E, K, N, T, top_k, dt=None):
    dt = dt or torch.bfloat16
    R, counts, offs, x, w, go = routed_operands(torch, E, K, N, T, top_k, dt)

    def fwd():
        with torch.no_grad():
            torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)

    def fb():
        y = torch._grouped_mm(x, w.transpose(-2, -1), offs=offs)
        torch.autograd.grad(y, (x, w), go)

    tf = op_rates.timed(fwd, reps=3)
    tfb = op_rates.timed(fb, reps=3)
    fl = 2.0 * R * K * N
    return {"kind": "grouped_mm", "dtype": {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}[dt], "E": E, "K": K, "N": N, "R": R, "T": T,
            "top_k": top_k, "rows_per_expert_max": int(counts.max()), "rows_per_expert_min": int(counts.min()),
            "fwd_ms": round(tf * 1e3, 4), "fwd_bwd_ms": round(tfb * 1e3, 4),
            "fwd_tflops": round(fl / tf / 1e12, 2), "bwd_tflops": round(2 * fl / max(tfb - tf, 1e-9) / 1e12, 2)}


def dense_row(torch, M, K, N, dt=None):
    """The dense GEMM of the same total shape (x [M, K] @ w.T [K, N]), for the grouped kernel's efficiency."""
    dt = dt or torch.bfloat16
    x = torch.randn(M, K, device="cuda", dtype=dt, requires_grad=True)
    w = torch.randn(N, K, device="cuda", dtype=dt, requires_grad=True)
    go = torch.randn(M, N, device="cuda", dtype=dt)

    def fwd():
        with torch.no_grad():
            torch.nn.functional.linear(x, w)

    def fb():
        torch.autograd.grad(torch.nn.functional.linear(x, w), (x, w), go)

    tf = op_rates.timed(fwd, reps=3)
    tfb = op_rates.timed(fb, reps=3)
    fl = 2.0 * M * K * N
    return {"kind": "dense_mm", "M": M, "K": K, "N": N, "fwd_ms": round(tf * 1e3, 4), "fwd_bwd_ms": round(tfb * 1e3, 4),
            "fwd_tflops": round(fl / tf / 1e12, 2), "bwd_tflops": round(2 * fl / max(tfb - tf, 1e-9) / 1e12, 2)}


def dropout_row(torch, b, h, s, d, causal, masked, p, hkv=None):
    import torch.nn.functional as F
    dt = torch.bfloat16
    q = torch.randn(b, h, s, d, device="cuda", dtype=dt, requires_grad=True)
    k = torch.randn(b, h, s, d, device="cuda", dtype=dt, requires_grad=True)
    v = torch.randn(b, h, s, d, device="cuda", dtype=dt, requires_grad=True)
    go = torch.randn(b, h, s, d, device="cuda", dtype=dt)
    mask = None
    if masked:  # transformers' sliding-window causal bool mask [1, 1, S, S] (window = S: every causal block)
        i = torch.arange(s, device="cuda")
        mask = (i[None, :] <= i[:, None])[None, None]
        causal = False

    def fwd():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p, is_causal=causal)

    def fb():
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p, is_causal=causal)
        torch.autograd.grad(o, (q, k, v), go)

    try:
        choice = int(torch._fused_sdp_choice(q, k, v, mask, p, causal))
    except Exception:  # noqa: BLE001
        choice = -1
    tf = op_rates.timed(fwd, reps=3)
    tfb = op_rates.timed(fb, reps=3)
    return {"kind": "sdpa_dropout", "dtype": "bf16", "b": b, "h": h, "s": s, "d": d, "causal": causal,
            "masked": masked, "p": p, "backend": choice, "fwd_ms": round(tf * 1e3, 4),
            "fwd_bwd_ms": round(tfb * 1e3, 4)}


def main():
    import torch
    torch.cuda.init()
    t0 = time.time()
    rows = []
    # (E, H, I, top_k): qwen3-30b-a3b, deepseek-v2-lite, the reduced deepseek-v3 of held out 12, gpt-oss-20b,
    # mixtral-8x7b, the families cases' qwen3_moe (16 / 32 experts), olmoe-like 64 x 1024
    shapes = [(128, 2048, 768, 8), (64, 2048, 1408, 6), (32, 1536, 512, 8), (32, 2880, 2880, 4),
              (8, 4096, 14336, 2), (16, 1024, 512, 4), (32, 2048, 768, 8), (64, 2048, 1024, 8)]
    for E, H, I, k in shapes:
        for T in (1024, 4096, 8192):
            for K, N in ((H, 2 * I), (I, H)):  # gate_up, down
                try:
                    rows.append(grouped_row(torch, E, K, N, T, k))
                    rows.append(dense_row(torch, T * k, K, N))
                except Exception as e:  # noqa: BLE001
                    print("grouped E%d K%d N%d T%d FAILED: %s" % (E, K, N, T, e), flush=True)
                    continue
                r, dn = rows[-2], rows[-1]
                print("[grouped_mm] E%d K%d N%d R%d: fwd %.1f bwd %.1f TFLOP/s (dense %.1f / %.1f)" % (
                    E, K, N, r["R"], r["fwd_tflops"], r["bwd_tflops"], dn["fwd_tflops"], dn["bwd_tflops"]), flush=True)
                torch.cuda.empty_cache()
    for b, h, s, d in ((8, 16, 1024, 64), (16, 12, 512, 64), (1, 24, 4096, 128), (2, 24, 2048, 128),
                       (16, 16, 512, 64), (4, 32, 2048, 128)):
        for causal, masked in ((True, False), (False, True), (False, False)):
            for p in (0.0, 0.1):
                try:
                    rows.append(dropout_row(torch, b, h, s, d, causal, masked, p))
                except Exception as e:  # noqa: BLE001
                    print("dropout b%d h%d s%d d%d FAILED: %s" % (b, h, s, d, e), flush=True)
                    continue
                r = rows[-1]
                print("[sdpa_dropout] b%d h%d s%d d%d causal=%d masked=%d p=%.1f backend %d: fwd %.3f fb %.3f ms" % (
                    b, h, s, d, causal, masked, p, r["backend"], r["fwd_ms"], r["fwd_bwd_ms"]), flush=True)
                torch.cuda.empty_cache()
    json.dump({"schema": "memplan-moe-attn-kernels/1", "gpu": torch.cuda.get_device_name(0),
               "torch": torch.__version__, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "wall_s": round(time.time() - t0, 1), "rows": rows}, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
