#!/usr/bin/env python3
"""Op-level rates for the step-time model (engine/plan/time_model.h), measured with PyTorch on one GPU.

    python3 calibrate/op_rates.py OUT.json [--quick]
    python3 calibrate/op_rates.py --table IN.json OUT.tsv      # no GPU: the table the engine embeds

Nothing else may run on the GPU meanwhile. Every figure is the median of CUDA-event-timed repeats after warm-up
(each repeat times a loop of calls long enough to dwarf the event resolution). Sections, each in its own
try/except so one failure leaves the others:
  gemm      F.linear(x[m,k], w[n,k]) -> [m,n] (the layout nn.Linear runs) over a log2 grid of m, n, k, bf16 / fp16
            / fp32 (fp32 without TF32, torch's default): TFLOP/s per (m, n, k); batched matmul of eager attention
  sdpa      F.scaled_dot_product_attention as the HF models call it (is_causal, default backend choice), forward
            and forward+backward, per dtype / head dim / sequence length: TFLOP/s on the causal half
  mem       effective bytes/s (reads + writes) of elementwise / norm / softmax / cast / cross-entropy kernels,
            forward and backward, at a large and a small size (the small one shows the per-kernel floor)
  conv      cuDNN conv2d forward and backward (dgrad + wgrad) at ResNet / ConvNeXt / EfficientNet shapes
  optimizer torch.optim step time per parameter and per tensor (AdamW / Adam / SGD, foreach / fused / forloop)
  overhead  CPU dispatch time of a tiny op, with and without autograd (the GPU idle meanwhile)
"""
import json
import math
import statistics
import sys
import time


def timed(fn, min_s=0.02, reps=5, warm=2):
    """Median seconds per call of fn (CUDA-event timed loops)."""
    import torch
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    est = max(time.perf_counter() - t0, 1e-6)
    inner = max(1, min(200, int(math.ceil(min_s / est))))
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / 1e3 / inner)
    return statistics.median(out)


def gemm(quick):
    import torch
    import torch.nn.functional as F
    torch.backends.cuda.matmul.allow_tf32 = False
    dims = [128, 512, 2048, 8192, 32768] if not quick else [512, 8192]
    res = {"dims": dims, "layout": "F.linear(x[m,k], w[n,k]) -> [m,n]", "tflops": {}}
    for name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp32", torch.float32)):
        table = []
        for m in dims:
            for n in dims:
                for k in dims:
                    fl = 2.0 * m * n * k
                    if dt == torch.float32 and fl > 3e12:
                        table.append(None)  # saturated long before; the loader clamps to the neighbours
                        continue
                    if name == "fp16" and (fl > 3e12 or min(m, n, k) < 512):
                        table.append(None)
                        continue
                    x = torch.randn(m, k, device="cuda", dtype=dt)
                    w = torch.randn(n, k, device="cuda", dtype=dt)
                    s = timed(lambda: F.linear(x, w), reps=3)
                    table.append(round(fl / s / 1e12, 2))
                    del x, w
        res["tflops"][name] = table  # index (i_m * len + i_n) * len + i_k
        print("[op_rates] gemm %s done" % name, flush=True)
    # batched matmul of eager attention: [b, s, d] x [b, d, s] (scores) and [b, s, s] x [b, s, d] (probs @ v)
    bmm = []
    for name, dt in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        for b in (64, 256):
            for s_ in (512, 1024, 2048):
                for d in (64, 128):
                    q = torch.randn(b, s_, d, device="cuda", dtype=dt)
                    kt = torch.randn(b, d, s_, device="cuda", dtype=dt)
                    p = torch.randn(b, s_, s_, device="cuda", dtype=dt)
                    v = torch.randn(b, s_, d, device="cuda", dtype=dt)
                    t1 = timed(lambda: torch.bmm(q, kt), reps=3)
                    t2 = timed(lambda: torch.bmm(p, v), reps=3)
                    fl = 2.0 * b * s_ * s_ * d
                    bmm.append({"dtype": name, "batch": b, "s": s_, "d": d, "qk_tflops": round(fl / t1 / 1e12, 2),
                                "pv_tflops": round(fl / t2 / 1e12, 2)})
                    del q, kt, p, v
    res["bmm"] = bmm
    return res


def sdpa_rate(name, dt, d, s_, causal, B, H, masked=False):
    """One SDPA row: forward and forward + backward of F.scaled_dot_product_attention on [B, H, S, D] at the default
    backend, TFLOP/s by 4 B H S^2 D (half when causal; backward counted as 2.5x the forward's FLOPs). masked: given a
    boolean [B, 1, S, S] sliding-window causal mask (window S / 2) instead of is_causal, as transformers passes a
    sliding window; the fused kernel then computes every block, so its FLOPs are the full square's."""
    import torch
    import torch.nn.functional as F
    q, k, v = (torch.randn(B, H, s_, d, device="cuda", dtype=dt, requires_grad=True) for _ in range(3))
    g = torch.randn(B, H, s_, d, device="cuda", dtype=dt)
    mask = None
    if masked:
        i = torch.arange(s_, device="cuda")
        mask = ((i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - s_ // 2)).expand(B, 1, s_, s_)
        causal = False
    try:
        choice = int(torch._fused_sdp_choice(q, k, v, mask, 0.0, causal))
    except Exception:  # noqa: BLE001
        choice = -1

    def fwd():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)

    def fb():
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        torch.autograd.grad(o, (q, k, v), g)

    tf = timed(fwd, reps=3)
    tfb = timed(fb, reps=3)
    fl = 4.0 * B * H * s_ * s_ * d * (0.5 if causal else 1.0)
    row = {"dtype": name, "d": d, "s": s_, "b": B, "h": H, "causal": causal, "backend": choice,
           "fwd_ms": round(tf * 1e3, 4), "fwd_bwd_ms": round(tfb * 1e3, 4),
           "fwd_tflops": round(fl / tf / 1e12, 2),
           "bwd_tflops": round(2.5 * fl / max(tfb - tf, 1e-9) / 1e12, 2)}
    if masked:
        row["masked"] = True
    return row


def sdpa_table(tag, schema, plan, out_path, flops_note):
    """Times every (name, dtype, d, s, causal, B, masked) of `plan` with sdpa_rate, prints each row, writes them."""
    import torch
    torch.cuda.init()
    rows = []
    t0 = time.time()
    for name, dt, d, s_, causal, B, masked in plan:
        try:
            rows.append(sdpa_rate(name, dt, d, s_, causal, B, 16, masked))
        except Exception as e:  # noqa: BLE001
            print("[%s] %s d%d s%d causal=%d FAILED: %s" % (tag, name, d, s_, causal, e), flush=True)
            continue
        print("[%s] %s d%d s%d causal=%d b%d backend %s: fwd %.1f bwd %.1f TFLOP/s" % (
            tag, name, d, s_, causal, B, rows[-1]["backend"], rows[-1]["fwd_tflops"], rows[-1]["bwd_tflops"]),
            flush=True)
        torch.cuda.empty_cache()
    json.dump({"schema": schema, "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "wall_s": round(time.time() - t0, 1),
               "flops_note": flops_note, "rows": rows}, open(out_path, "w"), indent=1)


def sdpa(quick):
    import torch
    rows = []
    for name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp32", torch.float32)):
        for d in (64, 128):
            for s_ in ((512, 1024, 2048, 4096) if not quick else (1024,)):
                for causal in (True, False):
                    if name == "fp16" and not causal:
                        continue
                    rows.append(sdpa_rate(name, dt, d, s_, causal, max(1, 16384 // s_), 16))
        print("[op_rates] sdpa %s done" % name, flush=True)
    return {"flops_note": "4 B H S^2 D, x0.5 when causal; bwd counted as 2.5 x fwd FLOPs", "rows": rows}


def mem(quick):
    import torch
    import torch.nn.functional as F
    rows = []
    for name, dt in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        for numel in ((1 << 26, 1 << 18) if not quick else (1 << 24,)):
            H = 1024
            x = torch.randn(numel // H, H, device="cuda", dtype=dt, requires_grad=True)
            y = torch.randn(numel // H, H, device="cuda", dtype=dt)
            w = torch.ones(H, device="cuda", dtype=dt, requires_grad=True)
            b = torch.zeros(H, device="cuda", dtype=dt, requires_grad=True)
            e = x.element_size()
            cases = {
                "add": (lambda: x.detach() + y, 3 * numel * e),
                "mul": (lambda: x.detach() * y, 3 * numel * e),
                "gelu": (lambda: F.gelu(x.detach()), 2 * numel * e),
                "silu": (lambda: F.silu(x.detach()), 2 * numel * e),
                "softmax": (lambda: torch.softmax(x.detach(), -1), 2 * numel * e),
                "layer_norm": (lambda: F.layer_norm(x.detach(), (H,), w.detach(), b.detach()), 2 * numel * e),
                "dropout": (lambda: F.dropout(x.detach(), 0.1, True), 2 * numel * e + numel),
                "to_copy": (lambda: x.detach().to(torch.float32 if dt != torch.float32 else torch.bfloat16),
                            numel * e + numel * (4 if dt != torch.float32 else 2)),
                "pow_mean": (lambda: x.detach().pow(2).mean(-1, keepdim=True), 2 * numel * e),
            }
            for op, (fn, nbytes) in cases.items():
                s = timed(fn)
                rows.append({"op": op, "dtype": name, "numel": numel, "pass": "fwd", "us": round(s * 1e6, 3),
                             "gb_per_s": round(nbytes / s / 1e9, 1)})
            # backward of a few (grad of x): bytes = reads of saved + grad_out + write grad_in
            gy = torch.randn_like(y)
            bw = {
                "gelu": (lambda: torch.autograd.grad(F.gelu(x), x, gy), 5 * numel * e),
                "layer_norm": (lambda: torch.autograd.grad(F.layer_norm(x, (H,), w, b), (x, w, b), gy), 5 * numel * e),
                "softmax": (lambda: torch.autograd.grad(torch.softmax(x, -1), x, gy), 5 * numel * e),
            }
            for op, (fn, nbytes) in bw.items():
                s = timed(fn)
                rows.append({"op": op, "dtype": name, "numel": numel, "pass": "fwd+bwd", "us": round(s * 1e6, 3),
                             "gb_per_s": round(nbytes / s / 1e9, 1)})
            del x, y, gy
        print("[op_rates] mem %s done" % name, flush=True)
    # cross-entropy over a vocabulary (the loss of every LM case), forward + backward
    for name, dt in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        for V in (32000, 50257):
            N = 8192
            lg = torch.randn(N, V, device="cuda", dtype=dt, requires_grad=True)
            t = torch.randint(0, V, (N,), device="cuda")
            s = timed(lambda: torch.autograd.grad(F.cross_entropy(lg.float(), t), lg))
            rows.append({"op": "cross_entropy", "dtype": name, "numel": N * V, "pass": "fwd+bwd",
                         "us": round(s * 1e6, 3), "gb_per_s": round(N * V * lg.element_size() / s / 1e9, 1)})
            del lg
    return {"bytes_note": "gb_per_s = the nominal bytes read + written by the kernel(s) / time", "rows": rows}


def conv(quick):
    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = False
    rows = []
    shapes = [  # (name, N, C, H, K, r, stride, groups)
        ("stem7x7", 64, 3, 224, 64, 7, 2, 1), ("1x1_56", 64, 64, 56, 256, 1, 1, 1), ("3x3_56", 64, 64, 56, 64, 3, 1, 1),
        ("1x1_28", 64, 512, 28, 128, 1, 1, 1), ("3x3_28", 64, 128, 28, 128, 3, 1, 1), ("3x3_14", 64, 256, 14, 256, 3, 1, 1),
        ("1x1_14", 64, 1024, 14, 256, 1, 1, 1), ("3x3_7", 64, 512, 7, 512, 3, 1, 1), ("1x1_7", 64, 2048, 7, 512, 1, 1, 1),
        ("dw3x3_56", 64, 144, 56, 144, 3, 1, 144), ("dw7x7_56", 64, 96, 56, 96, 7, 1, 96), ("dw3x3_14", 64, 480, 14, 480, 3, 1, 480),
    ]
    if quick:
        shapes = shapes[:3]
    for name, dt in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        for (sn, N, C, H, K, r, st, gr) in shapes:
            x = torch.randn(N, C, H, H, device="cuda", dtype=dt, requires_grad=True)
            w = torch.randn(K, C // gr, r, r, device="cuda", dtype=dt, requires_grad=True)
            out = F.conv2d(x, w, stride=st, padding=r // 2, groups=gr)
            go = torch.randn_like(out)
            fl = 2.0 * out.numel() * (C // gr) * r * r

            def fwd():
                with torch.no_grad():
                    F.conv2d(x, w, stride=st, padding=r // 2, groups=gr)

            def fb():
                o = F.conv2d(x, w, stride=st, padding=r // 2, groups=gr)
                torch.autograd.grad(o, (x, w), go)

            tf = timed(fwd, reps=3)
            tfb = timed(fb, reps=3)
            rows.append({"shape": sn, "dtype": name, "n": N, "c": C, "h": H, "k": K, "r": r, "stride": st, "groups": gr,
                         "fwd_ms": round(tf * 1e3, 4), "fwd_bwd_ms": round(tfb * 1e3, 4),
                         "fwd_tflops": round(fl / tf / 1e12, 2), "bwd_tflops": round(2 * fl / max(tfb - tf, 1e-9) / 1e12, 2)})
            del x, w, out, go
        # batch norm (training) forward + backward, the other big cost of a ResNet step
        for (N, C, H) in ((64, 256, 56), (64, 1024, 14)):
            x = torch.randn(N, C, H, H, device="cuda", dtype=dt, requires_grad=True)
            bn = torch.nn.BatchNorm2d(C).cuda().to(dt)
            go = torch.randn_like(x)
            tf = timed(lambda: bn(x.detach()), reps=3)
            tfb = timed(lambda: torch.autograd.grad(bn(x), x, go), reps=3)
            nb = x.numel() * x.element_size()
            rows.append({"shape": "bn_%d_%d" % (C, H), "dtype": name, "fwd_ms": round(tf * 1e3, 4),
                         "fwd_bwd_ms": round(tfb * 1e3, 4), "fwd_gb_per_s": round(3 * nb / tf / 1e9, 1),
                         "fwd_bwd_gb_per_s": round(8 * nb / tfb / 1e9, 1)})
            del x, go
        print("[op_rates] conv %s done" % name, flush=True)
    return {"flops_note": "2 x out numel x C/groups x r^2; bwd = dgrad + wgrad = 2 x fwd FLOPs", "rows": rows}


def optimizer(quick):
    import torch
    rows = []
    configs = [("adamw", "foreach"), ("adamw", "fused"), ("adamw", "forloop"), ("adam", "foreach"),
               ("sgd", "foreach"), ("sgd_momentum", "foreach"), ("sgd_momentum", "fused"), ("sgd", "forloop")]
    for dname, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        for (opt_name, impl) in configs:
            for (ntens, numel) in ((64, 1 << 22), (1024, 4096)):
                ps = [torch.nn.Parameter(torch.randn(numel, device="cuda", dtype=dt)) for _ in range(ntens)]
                for p in ps:
                    p.grad = torch.randn_like(p)
                kw = {"foreach": True} if impl == "foreach" else {"fused": True} if impl == "fused" else {"foreach": False}
                if opt_name == "adamw":
                    o = torch.optim.AdamW(ps, lr=1e-4, **kw)
                elif opt_name == "adam":
                    o = torch.optim.Adam(ps, lr=1e-4, **kw)
                elif opt_name == "sgd_momentum":
                    o = torch.optim.SGD(ps, lr=1e-3, momentum=0.9, **kw)
                else:
                    o = torch.optim.SGD(ps, lr=1e-3, **kw)
                ts = []
                for i in range(7):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    o.step()
                    torch.cuda.synchronize()
                    if i >= 2:
                        ts.append(time.perf_counter() - t0)
                rows.append({"optimizer": opt_name, "impl": impl, "dtype": dname, "tensors": ntens, "numel": numel,
                             "step_ms": round(statistics.median(ts) * 1e3, 4)})
                del ps, o
        print("[op_rates] optimizer %s done" % dname, flush=True)
    return {"rows": rows}


def overhead(quick):
    import torch
    import torch.nn.functional as F
    x = torch.zeros(16, device="cuda")
    xg = torch.zeros(16, device="cuda", requires_grad=True)
    w = torch.randn(16, 16, device="cuda", requires_grad=True)
    res = {}
    for name, fn in (("add_no_grad", lambda: x.add(1)), ("add_autograd", lambda: xg + 1),
                     ("linear_autograd", lambda: F.linear(xg, w))):
        n = 2000
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            ts.append((time.perf_counter() - t0) / n)
        torch.cuda.synchronize()
        res[name + "_us"] = round(statistics.median(ts) * 1e6, 3)
    # forward + backward of a chain of tiny ops: per-op CPU cost of autograd's backward too
    def chain():
        y = xg
        for _ in range(50):
            y = y * 1.0001 + 0.5
        y.sum().backward()
    for _ in range(5):
        chain()
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        chain()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    res["chain_fwd_bwd_per_op_us"] = round(statistics.median(ts) / 101 * 1e6, 3)
    return res


def solve_normal(A, b):
    """Least squares of A x = b by the normal equations (a few columns; stdlib only)."""
    n = len(A[0])
    M = [[sum(r[i] * r[j] for r in A) for j in range(n)] for i in range(n)]
    v = [sum(r[i] * y for r, y in zip(A, b)) for i in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            f = M[j][i] / M[i][i]
            M[j] = [mj - f * mi for mj, mi in zip(M[j], M[i])]
            v[j] -= f * v[i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (v[i] - sum(M[i][k] * x[k] for k in range(i + 1, n))) / M[i][i]
    return x


def table(inp, outp, extra=None):
    """Reduces a measured OUT.json to data/calibration/h200-op-rates.tsv (engine/time/step_time.h reads it); `extra`:
    calibrate/sdpa_short.py's or sdpa_headdim.py's OUT.json (their SDPA rows are appended after the main file's),
    sdpa_masked.py's (sdpa_masked rows), norm_reduce.py's (norm rows), mixed_dtype.py's (mem_layout mixed rows),
    moe_attn_kernels.py's (grouped_mm and sdpa_dropout rows), moe_odd_kernels.py's (index_bwd), gemm_grid.py's (its
    dims and tables replace the main file's gemm section; measured, not embedded) and / or
    calibrate/elementwise_layout.py's (reduced to the mem_layout ratios
    below)."""
    r = json.load(open(inp))
    layout, masked, norm, mixed, grouped, dropout, index_rows, grouped_loop = None, [], [], [], [], [], [], []
    for e in (extra or []):
        ex = json.load(open(e))
        if ex.get("schema") == "memplan-elementwise-layout/1":
            layout = ex
        elif ex.get("schema") == "memplan-sdpa-masked/1":
            masked = ex["rows"]
        elif ex.get("schema") == "memplan-norm-reduce/1":
            norm = ex["rows"]
        elif ex.get("schema") == "memplan-mixed-dtype/1":
            mixed = ex["rows"]
        elif ex.get("schema") == "memplan-gemm-grid/1":
            r["gemm"] = {"dims": ex["dims"], "tflops": ex["tflops"]}
        elif ex.get("schema") == "memplan-moe-odd-kernels/1":
            index_rows = [x for x in ex["rows"] if x["kind"] == "index_bwd"]
            # grouped_mm in fp32: ATen's per-expert loop, timed as the op (not the loop's estimate); fp32 only: its
            # loop's rate stays within 24 .. 43 TFLOP/s over the shapes timed; fp16's spans 54 .. 695,
            # which three rows cannot interpolate, so fp16 keeps the per-expert estimate from the dense table
            grouped_loop = [x for x in ex["rows"] if x["kind"] == "grouped_mm" and "fwd_tflops" in x
                            and x["dtype"] == "fp32"]
        elif ex.get("schema") == "memplan-moe-attn-kernels/1":
            grouped = [x for x in ex["rows"] if x["kind"] == "grouped_mm"]
            dropout = [x for x in ex["rows"] if x["kind"] == "sdpa_dropout" and x["p"] > 0]
        else:  # sdpa_short.py, sdpa_headdim.py: rows of the sdpa table
            r["sdpa"]["rows"] = r["sdpa"]["rows"] + ex["rows"]
    lines = ["# memplan op rates: reduced by calibrate/op_rates.py --table from %s (%s, torch %s, CUDA %s, %s)"
             % (inp.split("/")[-1], r["gpu"], r["torch"], r["cuda"], r["date"])]
    g = r["gemm"]
    lines.append("gemm_dims " + " ".join(str(d) for d in g["dims"]))
    for dt, tab in g["tflops"].items():
        lines.append("gemm %s %s" % (dt, " ".join("-" if v is None else "%g" % v for v in tab)))
    for row in r["sdpa"]["rows"]:
        lines.append("sdpa %s %d %d %d %g %g" % (row["dtype"], row["d"], row["s"], int(row["causal"]),
                                                 row["fwd_tflops"], row["bwd_tflops"]))
    for row in masked:  # sdpa_masked.py: with an explicit mask, full-square FLOPs
        lines.append("sdpa_masked %s %d %d %g %g" % (row["dtype"], row["d"], row["s"], row["fwd_tflops"],
                                                      row["bwd_tflops"]))
    for row in grouped + grouped_loop:  # torch._grouped_mm, TFLOP/s by 2 R K N (backward 2x): bf16 and fp32 rows
        dt = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(row["dtype"], row["dtype"])
        lines.append("grouped_mm %s %d %d %d %d %g %g" % (dt, row["E"], row["K"], row["N"], row["R"],
                                                         row["fwd_tflops"], row["bwd_tflops"]))
    for row in dropout:  # moe_attn_kernels.py: SDPA at dropout_p 0.1, TFLOP/s as the op counts them
        mode = "masked" if row["masked"] else ("causal" if row["causal"] else "full")
        fl = 4.0 * row["b"] * row["h"] * row["s"] ** 2 * row["d"] * (0.5 if mode == "causal" else 1.0)
        lines.append("sdpa_dropout %s %d %d %s %.2f %.2f" % (row["dtype"], row["d"], row["s"], mode,
                                                             fl / (row["fwd_ms"] * 1e-3) / 1e12,
                                                             2.5 * fl / ((row["fwd_bwd_ms"] - row["fwd_ms"]) * 1e-3) / 1e12))
    if index_rows:
        # moe_odd_kernels.py: the backward of x[idx] (zero fill, sort, index_put_ with accumulate) by least squares
        # t = a + bytes / bw + c * dup over the timed patterns; bytes = the output gradient read plus the source-sized
        # gradient filled and written, dup = rows / source rows. The intercept a (~0.18 ms) is the host's: the
        # profiled steps ran these kernels in 10 us (Swin's relative-position table) .. 0.33 ms (65536 x 2048), so
        # only bw and c are the GPU's
        A, b = [], []
        for x in index_rows:
            by = (x["R"] * x["W"] + 2 * x["n_src"] * x["W"]) * 2.0
            A.append([1.0, by, x["R"] / x["n_src"]])
            b.append(x["bwd_ms"] * 1e-3)
        a0, per_byte, per_dup = solve_normal(A, b)
        lines.append("index_bwd %.4g %.4g" % (1e-9 / per_byte, per_dup * 1e6))
    for row in norm:  # norm_reduce.py: LayerNorm and column sums by row length, us per call
        if row["op"] in ("ln_fwd", "ln_bwd_input", "ln_bwd_all", "colsum", "rowmean"):
            lines.append("norm %s %s %d %d %g" % (row["op"], row["dtype"], row["n"], row["n"] * row["m"], row["us"]))
    for dt in ("bf16", "fp32"):
        # the streaming kernels (binary ops, activations, dropout): not the reductions (softmax, layer_norm,
        # pow_mean, which run their own kernels: LayerNorm is timed by row length in the norm rows) nor the
        # dtype-changing copy; with them the bf16 median fell on dropout's 2.94 TB/s where bf16 adds and muls
        # stream at 4.25 (the pure-bf16 GPT-2 / BERT steps' elementwise kernels were costed 1.2 - 1.4x too slow)
        big = [x["gb_per_s"] for x in r["mem"]["rows"] if x["dtype"] == dt and x["pass"] == "fwd"
               and x["numel"] >= (1 << 24) and x["op"] in ("add", "mul", "gelu", "silu", "dropout")]
        lines.append("mem %s %g" % (dt, statistics.median(big)))
        small = [x["us"] for x in r["mem"]["rows"] if x["dtype"] == dt and x["pass"] == "fwd" and x["numel"] < (1 << 20)]
        if small:
            lines.append("kernel_floor_us %s %g" % (dt, statistics.median(small)))
        if layout:
            # elementwise_layout.py: a copy of a transposed view that keeps the inner dimension
            # (x.transpose(1, 2).contiguous(): attention heads, windows) runs ATen's non-vectorized kernel; its
            # bandwidth over the contiguous one's, same run, outputs of at least 2^23 elements (smaller ones are
            # launch-bound and hide the layout)
            big_rows = [x for x in layout["rows"] if x["dtype"] == dt and x["numel"] >= (1 << 23)]
            contig = statistics.median(x["gb_per_s"] for x in big_rows if x["layout"] in ("contiguous", "contiguous_clone"))
            strided = statistics.median(x["gb_per_s"] for x in big_rows if x["layout"] == "transpose12_to_contiguous")
            lines.append("mem_layout strided_copy %s %.4f" % (dt, strided / contig))
            # a copy of a permute that moves the inner dimension (ConvNeXt's channels-last permute before its
            # LayerNorm: [N, C, H, W] -> [N, H, W, C])
            permuted = statistics.median(x["gb_per_s"] for x in big_rows if x["layout"] == "permuted_to_contiguous")
            lines.append("mem_layout permuted_copy %s %.4f" % (dt, permuted / contig))
            # a binary op with a broadcast operand ([C, 1, 1], [N, C, 1, 1], a last-dim [H]): TensorIterator's
            # offset-calculator kernel, not the vectorized one
            bcast = statistics.median(x["gb_per_s"] for x in big_rows
                                      if x["layout"] in ("broadcast_c11", "broadcast_nc11", "broadcast_last_dim"))
            lines.append("mem_layout broadcast %s %.4f" % (dt, bcast / contig))
        if mixed and dt == "fp32":
            # mixed_dtype.py: binary ops of an fp32 and a bf16 operand (fp32 result) run TensorIterator's casting
            # kernels; their GB/s over the same run's fp32 + fp32 add of the same size, median over the sizes.
            # mixed: same shapes; mixed_broadcast: the full-size operand fp32, the broadcast one bf16;
            # mixed_broadcast_cast: the full-size operand bf16 (cast on every read), the broadcast one fp32
            def ratio(dtypes):
                out = []
                for n in sorted({x["numel"] for x in mixed}):
                    ref = [x["gb_per_s"] for x in mixed if x["numel"] == n and x["dtypes"] == "fp32+fp32"]
                    got = [x["gb_per_s"] for x in mixed if x["numel"] == n and x["dtypes"] in dtypes]
                    if ref and got:
                        out.append(statistics.median(got) / ref[0])
                return statistics.median(out)
            lines.append("mem_layout mixed fp32 %.4f" % ratio(("fp32+bf16", "bf16+fp32", "fp32*bf16")))
            lines.append("mem_layout mixed_broadcast fp32 %.4f" % ratio(("fp32*bf16[H]",)))
            lines.append("mem_layout mixed_broadcast_cast fp32 %.4f" % ratio(("bf16*fp32[H]",)))
    classes = {}
    for row in r["conv"]["rows"]:
        if row["shape"].startswith("bn_"):
            continue
        cls = ("dw%dx%d" % (row["r"], row["r"])) if row["groups"] > 1 else ("stem" if row["c"] <= 4 else
                                                                          "dense%dx%d" % (row["r"], row["r"]))
        classes.setdefault((cls, row["dtype"]), []).append(row)
    for (cls, dt), rows in sorted(classes.items()):
        lines.append("conv %s %s %g %g" % (cls, dt, statistics.median(x["fwd_tflops"] for x in rows),
                                           statistics.median(x["bwd_tflops"] for x in rows)))
    for dt in ("bf16", "fp32"):
        bn = [x for x in r["conv"]["rows"] if x["shape"].startswith("bn_") and x["dtype"] == dt]
        if bn:
            lines.append("bn %s %g %g" % (dt, statistics.median(x["fwd_gb_per_s"] for x in bn),
                                          statistics.median(x["fwd_bwd_gb_per_s"] for x in bn)))
    # per parameter and per tensor: t = a n_params + b n_tensors from the two sizes (64 x 4 Mi, 1024 x 4 Ki)
    opt = {}
    for row in r["optimizer"]["rows"]:
        opt.setdefault((row["optimizer"], row["impl"], row["dtype"]), {})[row["tensors"]] = row
    for (o, impl, dt), byn in sorted(opt.items()):
        if 64 not in byn or 1024 not in byn:
            continue
        big, small = byn[64], byn[1024]
        n1, p1, t1 = 64, 64 * big["numel"], big["step_ms"] * 1e-3
        n2, p2, t2 = 1024, 1024 * small["numel"], small["step_ms"] * 1e-3
        det = p1 * n2 - p2 * n1
        a = (t1 * n2 - t2 * n1) / det
        b = (p1 * t2 - p2 * t1) / det
        lines.append("opt %s %s %s %g %g" % (o, impl, dt, max(a, 0) * 1e9, max(b, 0) * 1e6))
    for k, v in r["overhead"].items():
        lines.append("overhead %s %g" % (k, v))
    with open(outp, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    if sys.argv[1] == "--table":
        extra = [sys.argv[i + 1] for i in range(4, len(sys.argv) - 1) if sys.argv[i] == "--extra"]
        return table(sys.argv[2], sys.argv[3], extra)
    out = sys.argv[1]
    quick = "--quick" in sys.argv
    import torch
    torch.cuda.init()
    res = {"schema": "memplan-op-rates/1", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "quick": quick,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    t_all = time.time()
    for name, fn in (("overhead", overhead), ("gemm", gemm), ("sdpa", sdpa), ("mem", mem), ("conv", conv),
                     ("optimizer", optimizer)):
        t0 = time.time()
        try:
            res[name] = fn(quick)
        except Exception as e:  # noqa: BLE001
            import traceback
            res[name] = {"error": "%s: %s" % (type(e).__name__, e), "traceback": traceback.format_exc()[-2000:]}
            print("[op_rates] %s FAILED: %s" % (name, e), flush=True)
        res.setdefault("wall_s", {})[name] = round(time.time() - t0, 1)
        torch.cuda.empty_cache()
        with open(out, "w") as f:
            json.dump(res, f, indent=1)
    res["wall_s"]["total"] = round(time.time() - t_all, 1)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print("[op_rates] wrote %s in %.1f s" % (out, time.time() - t_all), flush=True)


if __name__ == "__main__":
    main()
