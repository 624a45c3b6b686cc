#!/usr/bin/env python3
"""Three kernel families held out 12's profiled MoE steps ran slower than the step-time model costed them (issue 17
part 3, eighth session), timed alone:

1. torch._grouped_mm in fp32 and fp16 (grouped_mm is not autocast: under amp transformers casts the routed rows to
   the fp32 experts' weight), against a loop of one torch.mm per expert over the same rows (the hypothesis the
   model uses where the table has no row of the dtype: E GEMMs of the mean rows per expert).
2. The backward of advanced indexing x[idx] (index_put_ with accumulate: ATen's sort-based indexing_backward_kernel)
   by how often the indices repeat: a permutation (the experts' inverse permutation), each row k times (the routed
   rows' gather, perm // k), and a few rows repeated R / E times (gpt_oss's per-row expert biases,
   gate_up_proj_bias[expert_ids]).
3. Rows whose length is not a multiple of the 16-byte vector (gpt_oss's eager attention concatenates a sink column:
   [B, H, S, S + 1]): softmax forward and backward, the concatenation, the slice copy and a max over the last dim,
   at S + 1 against S.

    python3 calibrate/moe_odd_kernels.py OUT.json          (GPU machine, ~1 min)
"""
import json
import sys
import time

import moe_attn_kernels
import op_rates


def grouped(torch, E, K, N, T, top_k, dt):
    """moe_attn_kernels.grouped_row (the op, forward and forward + backward) in `dt`, and the loop of one torch.mm per
    expert over the same rows (forward)."""
    try:
        row = moe_attn_kernels.grouped_row(torch, E, K, N, T, top_k, dt)
    except Exception as e:  # noqa: BLE001
        row = {"kind": "grouped_mm", "dtype": {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}[dt],
               "E": E, "K": K, "N": N, "R": T * top_k, "T": T, "top_k": top_k, "error": str(e)[:300]}
    R, counts, _, x, w, _ = moe_attn_kernels.routed_operands(torch, E, K, N, T, top_k, dt)
    bounds = [0] + torch.cumsum(counts, 0).tolist()

    def loop_fwd():
        with torch.no_grad():
            for e in range(E):
                torch.mm(x[bounds[e]:bounds[e + 1]], w[e].t())

    tl = op_rates.timed(loop_fwd, reps=3)
    row.update(loop_fwd_ms=round(tl * 1e3, 4), loop_fwd_tflops=round(2.0 * R * K * N / tl / 1e12, 2))
    return row


def index_bwd(torch, pattern, n_src, R, W, dt=None):
    dt = dt or torch.bfloat16
    g = torch.Generator(device="cpu").manual_seed(0)
    if pattern == "perm":
        idx = torch.randperm(n_src, generator=g)
    elif pattern.startswith("repeat"):  # each source row k times, in a random order (perm // k)
        k = R // n_src
        idx = torch.randperm(R, generator=g) // k
    else:  # "sorted_few": n_src rows, each R / n_src times, sorted (expert ids sorted by expert)
        idx = torch.sort(torch.randint(0, n_src, (R,), generator=g)).values
    idx = idx.cuda()
    x = torch.randn(n_src, W, device="cuda", dtype=dt, requires_grad=True)
    go = torch.randn(idx.numel(), W, device="cuda", dtype=dt)

    def fwd():
        with torch.no_grad():
            x[idx]

    def fb():
        torch.autograd.grad(x[idx], (x,), go)

    tf = op_rates.timed(fwd, reps=3)
    tfb = op_rates.timed(fb, reps=3)
    return {"kind": "index_bwd", "pattern": pattern, "n_src": n_src, "R": int(idx.numel()), "W": W, "dtype": "bf16",
            "fwd_ms": round(tf * 1e3, 4), "fwd_bwd_ms": round(tfb * 1e3, 4),
            "bwd_ms": round((tfb - tf) * 1e3, 4)}


def odd_rows(torch, rows, L, dt):
    import torch.nn.functional as F
    x = torch.randn(rows, L, device="cuda", dtype=dt, requires_grad=True)
    go = torch.randn(rows, L, device="cuda", dtype=dt)
    a = torch.randn(rows, L - 1, device="cuda", dtype=dt)
    col = torch.randn(rows, 1, device="cuda", dtype=dt)
    out = {}

    def sm_fwd():
        with torch.no_grad():
            F.softmax(x, dim=-1, dtype=dt)

    def sm_fb():
        torch.autograd.grad(F.softmax(x, dim=-1, dtype=dt), (x,), go)

    def cat():
        torch.cat([a, col], dim=-1)

    def slice_copy():
        x.detach()[..., :-1].contiguous()

    def amax():
        x.detach().max(dim=-1, keepdim=True)

    def add():
        x.detach() + go

    for name, fn in (("softmax_fwd", sm_fwd), ("softmax_fwd_bwd", sm_fb), ("cat_last", cat), ("slice_copy", slice_copy),
                     ("max_last", amax), ("add", add)):
        out[name + "_ms"] = round(op_rates.timed(fn, reps=3) * 1e3, 4)
    return dict(kind="odd_rows", rows=rows, L=L, dtype={torch.float32: "fp32", torch.bfloat16: "bf16"}[dt], **out)


def main():
    import torch
    torch.cuda.init()
    t0 = time.time()
    rows = []
    for dt in (torch.float32, torch.float16):
        for E, K, N, T, k in ((128, 2048, 1536, 4096, 8), (128, 768, 2048, 4096, 8), (16, 1024, 1024, 2048, 4),
                              (32, 2048, 1536, 2048, 8), (8, 4096, 28672, 2048, 2), (64, 2048, 2816, 4096, 6)):
            if dt == torch.float16 and E not in (128, 8):
                continue
            rows.append(grouped(torch, E, K, N, T, k, dt))
            print("[grouped_mm]", json.dumps(rows[-1]), flush=True)
            torch.cuda.empty_cache()
    for pattern, n_src, R, W in (("perm", 65536, 65536, 2048), ("repeat8", 8192, 65536, 2048),
                                 ("repeat4", 2048, 8192, 2880), ("perm", 8192, 8192, 2880),
                                 ("sorted_few", 32, 8192, 5760), ("sorted_few", 32, 8192, 2880),
                                 ("sorted_few", 128, 65536, 1536), ("repeat2", 8192, 16384, 4096)):
        rows.append(index_bwd(torch, pattern, n_src, R, W))
        print("[index_bwd]", json.dumps(rows[-1]), flush=True)
        torch.cuda.empty_cache()
    for dt in (torch.bfloat16, torch.float32):
        for r_, L in ((64 * 2048, 2048), (64 * 2048, 2049), (16384, 50257), (16384, 50264), (8192, 151936)):
            rows.append(odd_rows(torch, r_, L, dt))
            print("[odd_rows]", json.dumps(rows[-1]), flush=True)
            torch.cuda.empty_cache()
    json.dump({"schema": "memplan-moe-odd-kernels/1", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "wall_s": round(time.time() - t0, 1),
               "rows": rows}, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
