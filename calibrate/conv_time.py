#!/usr/bin/env python3
"""Measures the GPU time of each convolution pass per shape, as the torchvision models run them (issue 17 part 3).

Why: the step-time model costed convolutions by class-median rates (stem, dense 1x1 / 3x3, depthwise), and the
vision rows of the timing corpus missed by -41 .. +21 %: cuDNN's heuristic engine for a shape (torch's default,
cudnn.benchmark off), the native depthwise kernels, and channels-last convs (ConvNeXt's residual stream after its
first permute) run at rates that differ by an order of magnitude between shapes of one class. Measured per shape,
replayed by the engine from a table like the workspace table (calibrate/conv_workspace.py).

What: the unique (c_in, c_out, kernel, stride, pad, h, w, groups, dilation, layout) of every Conv2d of the zoo's
torchvision models (forward hooks on a meta-device forward at each image size; layout = whether the conv's input
has channels-last strides), at the batch sizes BATCHES and dtypes fp32 (TF32 convs: cuDNN's default) / bf16 /
fp16. Per row: forward (F.conv2d) and backward (aten.convolution_backward with the model's mask: grad_input unless
the input is the image, grad_weight always, no bias) in microseconds of GPU time.

How a pass is timed: once to warm cuDNN's plan cache, once to size the repetition count (about 2 ms of work), then
`reps` back-to-back calls behind a torch.cuda._sleep that keeps the GPU busy while Python enqueues them, so the
event pair measures the kernels alone (what a GPU-bound training step sees), not Python's launch rate.

Usage (GPU machine): python3 calibrate/conv_time.py OUT.json [--models=a,b] [--batches=1,8,32,128]
                                                   [--dtypes=bf16,fp32,fp16] [--deadline-s=S] [--from-sig=I]
       (anywhere)     python3 calibrate/conv_time.py --table IN.json[,IN2.json...] OUT.tsv
The table is what the engine embeds (data/calibration/h200-conv-time.tsv).
"""
import json
import sys
import time

import conv_workspace
import table_io

BASE_MODELS = ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "vit_b_16", "vit_b_32", "vit_l_16"]
BATCHES = [1, 8, 32, 128]


def signatures(models, image_size=224):
    """{(C, K, k, s, p, H, W, g, d, channels_last): set of model names} at batch 1 on the meta device."""
    import torch
    import torchvision
    sigs = {}
    for name in models:  # layout as the meta device shows it (no ConvNeXt rule: the timing rows were measured so)
        conv_workspace.collect_signatures(torch, sigs, getattr(torchvision.models, name)().to("meta"), name,
                                          image_size, False)
    return {k[:-1] + (int(k[-1]),): v for k, v in sigs.items()}  # the layout as 0 / 1 in the rows written


def gpu_us(torch, fn, target_ms=2.0, max_reps=64):
    """Microseconds of GPU time per call of fn, the calls enqueued behind a sleep kernel (see the module doc)."""
    fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    fn()
    e1.record()
    torch.cuda.synchronize()
    t_ms = max(e0.elapsed_time(e1), 1e-3)
    reps = max(1, min(max_reps, int(target_ms / t_ms)))
    torch.cuda._sleep(int(2e6 + reps * 8e4))  # ~1 ms + 40 us per call at ~2 GHz: longer than Python's enqueueing
    e0.record()
    for _ in range(reps):
        fn()
    e1.record()
    torch.cuda.synchronize()
    return 1e3 * e0.elapsed_time(e1) / reps, reps


def measure(torch, F, sig, n, dtype):
    C, K, k, s, p, H, W, g, d, cl = sig
    fmt = torch.channels_last if cl else torch.contiguous_format
    x = torch.randn(n, C, H, W, device="cuda", dtype=dtype).contiguous(memory_format=fmt)
    w = torch.randn(K, C // g, k, k, device="cuda", dtype=dtype)
    y = F.conv2d(x, w, None, s, p, d, g)
    gy = torch.randn_like(y)
    del y
    mask = [C != 3, True, False]  # the image needs no gradient (conv_workspace.py's stem rule)
    fwd, fr = gpu_us(torch, lambda: F.conv2d(x, w, None, s, p, d, g))
    bwd, br = gpu_us(torch, lambda: torch.ops.aten.convolution_backward(gy, x, w, None, [s, s], [p, p], [d, d], False,
                                                                          [0, 0], g, mask))
    del x, w, gy
    return fwd, bwd, fr, br


def write_table(in_path, out_path):
    run, seen = None, set()
    for path in in_path.split(","):  # several runs merged (a shape measured twice keeps the first run's row)
        with open(path) as f:
            r = json.load(f)
        if run is None:
            run = {"environment": r["environment"], "rows": []}
        for row in r["rows"]:
            key = tuple(row[k] for k in ("c", "k", "kernel", "stride", "pad", "h", "w", "groups", "dilation",
                                         "channels_last", "n", "dtype"))
            if key not in seen:
                seen.add(key)
                run["rows"].append(row)
    lines = table_io.header("memplan-conv-time/1: GPU microseconds of one convolution pass per shape "
                            "(calibrate/conv_time.py); backward = grad_input (unless c_in == 3) + grad_weight",
                            run["environment"],
                            "c_in c_out kernel stride pad h w groups dilation channels_last n dtype forward_us backward_us")
    for r in sorted(run["rows"], key=lambda r: (r["c"], r["k"], r["kernel"], r["stride"], r["pad"], r["h"], r["w"],
                                                r["groups"], r["dilation"], r["channels_last"], r["dtype"], r["n"])):
        lines.append(f'{r["c"]} {r["k"]} {r["kernel"]} {r["stride"]} {r["pad"]} {r["h"]} {r["w"]} {r["groups"]} '
                     f'{r["dilation"]} {r["channels_last"]} {r["n"]} {r["dtype"]} {r["fwd_us"]:.2f} {r["bwd_us"]:.2f}')
    table_io.write(out_path, lines)


def main():
    if table_io.table_mode(sys.argv, write_table):
        return
    import torch
    import torch.nn.functional as F
    opt = table_io.options(sys.argv[2:])
    models = opt["--models"].split(",") if "--models" in opt else BASE_MODELS + conv_workspace.FAMILY_MODELS
    batches = [int(v) for v in opt.get("--batches", ",".join(map(str, BATCHES))).split(",")]
    dtypes = {k: {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[k]
              for k in opt.get("--dtypes", "bf16,fp32,fp16").split(",")}
    deadline = float(opt.get("--deadline-s", 0))
    first = int(opt.get("--from-sig", 0))  # resume a run cut at its deadline: skip the first signatures (sorted)
    sigs = signatures(models)
    print(f"[conv_time] {len(sigs)} signatures from {len(models)} models", file=sys.stderr, flush=True)
    t0 = time.time()
    rows, skipped = [], 0
    # dtype outermost so a deadline leaves whole dtypes measured (bf16 first: amp runs them)
    for dname, dt in dtypes.items():
        for sig in sorted(sigs)[first:]:
            if deadline and time.time() - t0 > deadline:
                skipped += 1
                continue
            for n in batches:
                try:
                    fwd, bwd, fr, br = measure(torch, F, sig, n, dt)
                except torch.OutOfMemoryError:
                    continue
                C, K, k, s, p, H, W, g, d, cl = sig
                rows.append({"c": C, "k": K, "kernel": k, "stride": s, "pad": p, "h": H, "w": W, "groups": g,
                             "dilation": d, "channels_last": cl, "n": n, "dtype": dname,
                             "fwd_us": round(fwd, 3), "bwd_us": round(bwd, 3), "reps": [fr, br],
                             "models": sorted(sigs[sig])})
        print(f"[conv_time] {dname} done: {len(rows)} rows, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "cudnn_benchmark": torch.backends.cudnn.benchmark,
           "allow_tf32_cudnn": torch.backends.cudnn.allow_tf32, "date": time.strftime("%Y-%m-%d"),
           "seconds": round(time.time() - t0, 1), "signatures_skipped_at_deadline": skipped}
    with open(sys.argv[1], "w") as f:
        json.dump({"format": "memplan-conv-time/1", "environment": env, "rows": rows}, f)


if __name__ == "__main__":
    main()
