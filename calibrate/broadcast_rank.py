#!/usr/bin/env python3
"""Broadcast products and their reductions by rank (issue 17 part 3): what TensorIterator's non-vectorized kernel
and the reduce kernel run at when the operands broadcast over several dimensions at once.

Why: the profiled Mamba2 step of held out 24 (transformers' chunked SSD in PyTorch, fp32 products over
[B, chunks, 256, 256, heads, state]) spent 310 ms in `elementwise_kernel<128, 2>` and 161 ms in reductions where the
model, pricing each product at the one measured broadcast fraction (a 2-D [R, N] * [N] pattern), read 288 ms for
the whole step. This measures, per dtype, products whose dimensions coalesce to 1 .. 6 iteration dimensions with one
or both operands broadcast, and sums over the inner, a middle and several dimensions of such results; then profiles
one training step of that Mamba2 case with shapes recorded (torch.profiler, group_by_input_shape) so each op of the
SSD has its in-situ kernel time.

    python3 calibrate/broadcast_rank.py OUT.json     (GPU machine, ~60 s)

Rows ("products", "reductions"): pattern, dtype, output (or input) shape, the coalesced iteration rank (dimensions
left after merging neighbours that every operand keeps or broadcasts alike), microseconds (op_rates.timed), ns per
output element and GB/s of the output write. "profile": the step's ops by name and input shapes, CUDA us.
"""
import json
import sys

import op_rates


def coalesced_rank(out, *ins):
    """Dimensions TensorIterator iterates after merging neighbours: two adjacent output dimensions merge when every
    operand (right-aligned, contiguous) keeps both or broadcasts both. Size-1 output dimensions drop out."""
    r = len(out)
    pats = []
    for s in ins:
        s = [1] * (r - len(s)) + list(s)
        pats.append([s[i] == out[i] for i in range(r)])
    dims = [i for i in range(r) if out[i] > 1]
    n = 0
    prev = None
    for i in dims:
        key = tuple(p[i] for p in pats)
        if key != prev:
            n += 1
        prev = key
    return n


def products(torch):
    rows = []
    for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        pats = [
            # (pattern, out shape, a shape, b shape)
            ("rows_x_lastdim", (4096, 8192), (4096, 8192), (8192,)),
            ("rows_x_rowscale", (4096, 8192), (4096, 8192), (4096, 1)),
            ("outer_2d", (8192, 8192), (8192, 1), (1, 8192)),
            ("bsh_x_bs1", (8, 1024, 4096), (8, 1024, 4096), (8, 1024, 1)),
            ("ssd_G", (1, 2, 256, 256, 32, 128), (1, 2, 256, 1, 32, 128), (1, 2, 1, 256, 32, 128)),
            ("ssd_Y", (1, 2, 256, 256, 32, 64), (1, 2, 256, 256, 32, 1), (1, 2, 1, 256, 32, 64)),
            ("ssd_states", (2, 4, 256, 80, 64, 128), (2, 4, 256, 80, 1, 128), (2, 4, 256, 80, 64, 1)),
            ("ssd_cts", (2, 4, 256, 80, 64, 128), (2, 4, 256, 80, 1, 128), (2, 4, 1, 80, 64, 128)),
            ("ssd_Gbwd", (1, 2, 256, 256, 32, 128), (1, 2, 256, 256, 32, 1), (1, 2, 1, 256, 32, 128)),
            ("rank3_both", (64, 512, 2048), (64, 1, 2048), (64, 512, 1)),
            ("rank4_both", (16, 64, 64, 1024), (16, 64, 1, 1024), (16, 1, 64, 1024)),
            ("rank5_both", (8, 32, 64, 16, 256), (8, 32, 1, 16, 256), (8, 1, 64, 16, 1)),
            ("rank3_one", (64, 512, 2048), (64, 512, 2048), (64, 1, 2048)),
            ("rank4_one", (16, 64, 64, 1024), (16, 64, 64, 1024), (16, 1, 64, 1)),
        ]
        for pat, out, sa, sb in pats:
            a = torch.randn(*sa, device="cuda", dtype=dt)
            b = torch.randn(*sb, device="cuda", dtype=dt)
            n = 1
            for d in out:
                n *= d
            t = op_rates.timed(lambda: a * b)
            rows.append({"pattern": pat, "dtype": name, "out": list(out), "a": list(sa), "b": list(sb),
                         "rank": coalesced_rank(out, sa, sb), "numel": n, "us": round(t * 1e6, 2),
                         "ns_per_elem": round(t * 1e9 / n, 5),
                         "gb_per_s_out": round(n * a.element_size() / t / 1e9, 1)})
            del a, b
            torch.cuda.empty_cache()
    return rows


def reductions(torch):
    rows = []
    for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        x = torch.randn(1, 2, 256, 256, 32, 128, device="cuda", dtype=dt)
        y = torch.randn(2, 4, 256, 80, 64, 128, device="cuda", dtype=dt)
        cases = [
            ("sum_inner128", x, lambda: x.sum(-1)),
            ("sum_dim3", x, lambda: x.sum(3)),
            ("sum_dim2_keep", x, lambda: x.sum(2, keepdim=True)),
            ("sum_to_size_G_b", x, lambda: x.sum_to_size(1, 2, 1, 256, 32, 128)),
            ("sum_dims_2", y, lambda: y.sum(2)),
            ("sum_inner_N", y, lambda: y.sum(-1)),
            ("sum_to_size_states_a", y, lambda: y.sum_to_size(2, 4, 256, 80, 1, 128)),
            ("sum_to_size_states_b", y, lambda: y.sum_to_size(2, 4, 256, 80, 64, 1)),
            ("sum_to_size_cts_b", y, lambda: y.sum_to_size(2, 4, 1, 80, 64, 128)),
        ]
        for pat, inp, fn in cases:
            t = op_rates.timed(fn)
            n = inp.numel()
            rows.append({"pattern": pat, "dtype": name, "in": list(inp.shape), "numel_in": n,
                         "out": list(fn().shape), "us": round(t * 1e6, 2), "ns_per_elem_in": round(t * 1e9 / n, 5),
                         "gb_per_s_in": round(n * inp.element_size() / t / 1e9, 1)})
        del x, y
        torch.cuda.empty_cache()
    return rows


def profile_mamba2(torch):
    """One training step (after two warm-ups) of held out 24's Mamba2 row, 1 layer, ops grouped by input shapes."""
    from transformers import AutoConfig, AutoModelForCausalLM
    cfg = AutoConfig.for_model("mamba2", vocab_size=50288, hidden_size=2560, num_hidden_layers=1, num_heads=80,
                               head_dim=64, state_size=128, n_groups=1, expand=2, conv_kernel=4, chunk_size=256,
                               use_bias=False, use_conv_bias=True, residual_in_fp32=True, rms_norm=True,
                               tie_word_embeddings=True, time_step_rank=160, use_cache=False)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16).cuda()
    opt = torch.optim.AdamW(model.parameters(), foreach=True)
    ids = torch.randint(0, 50288, (2, 1024), device="cuda")

    def step():
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        step()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages(group_by_input_shape=True):
        dev_us = getattr(e, "self_device_time_total", None)
        if dev_us is None:
            dev_us = getattr(e, "self_cuda_time_total", 0)
        if dev_us < 200:
            continue
        rows.append({"op": e.key, "shapes": str(e.input_shapes)[:400], "count": e.count,
                     "self_device_us": round(dev_us, 1)})
    rows.sort(key=lambda r: -r["self_device_us"])
    kern = []
    for e in prof.key_averages():
        dev_us = getattr(e, "self_device_time_total", 0)
        if e.device_type is not None and "cuda" in str(e.device_type).lower() and dev_us > 500:
            kern.append({"kernel": e.key[:200], "count": e.count, "us": round(dev_us, 1)})
    kern.sort(key=lambda r: -r["us"])
    return rows[:80], kern[:30]


def main():
    import torch
    torch.cuda.init()
    out = {"format": "memplan-broadcast-rank/1", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "products": products(torch), "reductions": reductions(torch)}
    try:
        out["profile"], out["profile_kernels"] = profile_mamba2(torch)
    except Exception as e:  # the tables stand without it
        out["profile_error"] = repr(e)[:400]
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
    for r in out["products"]:
        print("%-16s %s rank %d  %9.1f us  %.4f ns/elem  %6.0f GB/s" % (r["pattern"], r["dtype"], r["rank"], r["us"],
                                                                        r["ns_per_elem"], r["gb_per_s_out"]))
    for r in out["reductions"]:
        print("%-22s %s %9.1f us  %.4f ns/elem_in  %6.0f GB/s" % (r["pattern"], r["dtype"], r["us"],
                                                                  r["ns_per_elem_in"], r["gb_per_s_in"]))
    for r in out.get("profile", [])[:40]:
        print("%8.0f us x%-3d %s %s" % (r["self_device_us"], r["count"], r["op"], r["shapes"][:160]))


if __name__ == "__main__":
    main()
