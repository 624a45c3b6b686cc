#!/usr/bin/env python3
"""Measures the GPU time of training-mode batch norm per shape, as the torchvision models run it (issue 17 part 3).

Why: one profiled ResNet-50 amp bf16 step at batch 128 (calibrate/step_profile.py, 2026-12-01) spends 30 of its
54 ms in ATen's batch-norm kernels (NCHW, bf16 input with fp32 weights: statistics, transform, backward), and
their bandwidth differs by shape (a grid over channels: few channels over many pixels leave SMs idle), so one
bandwidth figure cannot cost them. Measured per shape, replayed from a table (data/calibration/h200-bn-time.tsv).

What: the unique (C, H, W, channels_last) of every BatchNorm2d input of the zoo's torchvision models (meta-device
forward hooks at 224 x 224), at BATCHES and dtypes bf16 / fp16 (input in that dtype, weight, bias and running
statistics fp32: what autocast leaves them) and fp32. Per row: forward (F.batch_norm, training=True) and
forward + backward (torch.autograd.grad to input, weight and bias) in microseconds of GPU time, timed as
calibrate/conv_time.py times (back-to-back behind a sleep kernel).

Usage (GPU machine): python3 calibrate/bn_time.py OUT.json [--batches=1,8,32,128] [--dtypes=bf16,fp32,fp16]
                                                 [--deadline-s=S]
       (anywhere)     python3 calibrate/bn_time.py --table IN.json OUT.tsv
"""
import json
import sys
import time

import conv_time
import conv_workspace
import table_io


def signatures(models, image_size=224):
    import torch
    import torchvision
    sigs = {}
    for name in models:
        m = getattr(torchvision.models, name)().to("meta")
        hooks = []

        def hook(mod, inp, out, name=name):
            x = inp[0]
            cl = bool(not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last))
            sigs.setdefault((mod.num_features, x.shape[2], x.shape[3], int(cl)), set()).add(name)

        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                hooks.append(mod.register_forward_hook(hook))
        with torch.no_grad():
            m(torch.empty(1, 3, image_size, image_size, device="meta"))
        for h in hooks:
            h.remove()
    return sigs


def measure(torch, F, sig, n, dtype):
    C, H, W, cl = sig
    fmt = torch.channels_last if cl else torch.contiguous_format
    x = torch.randn(n, C, H, W, device="cuda", dtype=dtype).contiguous(memory_format=fmt).requires_grad_()
    w = torch.ones(C, device="cuda", requires_grad=True)
    b = torch.zeros(C, device="cuda", requires_grad=True)
    rm, rv = torch.zeros(C, device="cuda"), torch.ones(C, device="cuda")
    gy = torch.randn_like(x)

    def fwd():
        with torch.no_grad():
            return F.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)

    def fwd_bwd():
        y = F.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)
        return torch.autograd.grad(y, (x, w, b), gy)

    f, _ = conv_time.gpu_us(torch, fwd)
    fb, _ = conv_time.gpu_us(torch, fwd_bwd)
    return f, fb


def write_table(in_path, out_path):
    with open(in_path) as f:
        run = json.load(f)
    lines = table_io.header("memplan-bn-time/1: GPU microseconds of training-mode batch norm per input shape "
                            "(calibrate/bn_time.py); dtype = the input's (weights fp32 unless fp32)",
                            run["environment"], "c h w channels_last n dtype forward_us forward_backward_us")
    for r in sorted(run["rows"], key=lambda r: (r["c"], r["h"], r["w"], r["channels_last"], r["dtype"], r["n"])):
        lines.append(f'{r["c"]} {r["h"]} {r["w"]} {r["channels_last"]} {r["n"]} {r["dtype"]} {r["fwd_us"]:.2f} '
                     f'{r["fwd_bwd_us"]:.2f}')
    table_io.write(out_path, lines)


def main():
    if table_io.table_mode(sys.argv, write_table):
        return
    import torch
    import torch.nn.functional as F
    opt = table_io.options(sys.argv[2:])
    models = conv_time.BASE_MODELS + conv_workspace.FAMILY_MODELS
    batches = [int(v) for v in opt.get("--batches", "1,8,32,128").split(",")]
    dtypes = {k: {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[k]
              for k in opt.get("--dtypes", "bf16,fp32,fp16").split(",")}
    deadline = float(opt.get("--deadline-s", 0))
    sigs = signatures(models)
    print(f"[bn_time] {len(sigs)} signatures", file=sys.stderr, flush=True)
    t0, rows, skipped = time.time(), [], 0
    for dname, dt in dtypes.items():
        for sig in sorted(sigs):
            if deadline and time.time() - t0 > deadline:
                skipped += 1
                continue
            for n in batches:
                try:
                    f, fb = measure(torch, F, sig, n, dt)
                except torch.OutOfMemoryError:
                    continue
                C, H, W, cl = sig
                rows.append({"c": C, "h": H, "w": W, "channels_last": cl, "n": n, "dtype": dname,
                             "fwd_us": round(f, 3), "fwd_bwd_us": round(fb, 3), "models": sorted(sigs[sig])})
        print(f"[bn_time] {dname} done: {len(rows)} rows, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "date": time.strftime("%Y-%m-%d"),
           "seconds": round(time.time() - t0, 1), "signatures_skipped_at_deadline": skipped}
    with open(sys.argv[1], "w") as f:
        json.dump({"format": "memplan-bn-time/1", "environment": env, "rows": rows}, f)


if __name__ == "__main__":
    main()
