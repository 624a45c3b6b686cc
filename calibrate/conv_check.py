#!/usr/bin/env python3
"""Why in-model convolutions and conv_time.py's isolated timings disagree (issue 17 part 3, 2026-12-01): one
profiled ResNet-50 amp bf16 b128 step ran 16.2 ms of conv kernels where the conv-time table sums to 24.3 ms.
For every conv of the model (with multiplicity, its input shape at the given batch, bf16), three figures summed:
  sleep   conv_time.gpu_us (back-to-back calls behind a sleep kernel: what the table holds)
  kernels the same single call's kernel durations under torch.profiler (no gaps, no launch)
  model   the conv kernels of one profiled training step of the whole model under autocast
    python3 calibrate/conv_check.py OUT.json [MODEL] [BATCH]        (GPU machine, ~30 s)
"""
import json
import sys

import conv_time


def main():
    import torch
    import torch.nn.functional as F
    import torchvision
    from torch.profiler import ProfilerActivity, profile
    name = sys.argv[2] if len(sys.argv) > 2 else "resnet50"
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 128
    model = getattr(torchvision.models, name)().cuda().train()
    convs = []

    def hook(mod, inp, out):
        x = inp[0]
        convs.append((mod.in_channels, mod.out_channels, mod.kernel_size[0], mod.stride[0], mod.padding[0],
                      x.shape[2], x.shape[3], mod.groups, mod.dilation[0],
                      int(not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last))))

    hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        model(torch.randn(n, 3, 224, 224, device="cuda"))
    for h in hs:
        h.remove()

    def kernel_us(fn):
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            fn()
            torch.cuda.synchronize()
        return sum(e.time_range.elapsed_us() for e in p.events() if str(e.device_type).endswith("CUDA"))

    tot = {"sleep_fwd": 0.0, "sleep_bwd": 0.0, "kern_fwd": 0.0, "kern_bwd": 0.0}
    rows = []
    for sig in convs:
        C, K, k, s, p_, H, W, g, d, cl = sig
        x = torch.randn(n, C, H, W, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(K, C // g, k, k, device="cuda", dtype=torch.bfloat16)
        y = F.conv2d(x, w, None, s, p_, d, g)
        gy = torch.randn_like(y)
        mask = [C != 3, True, False]
        fwd = lambda: F.conv2d(x, w, None, s, p_, d, g)
        bwd = lambda: torch.ops.aten.convolution_backward(gy, x, w, None, [s, s], [p_, p_], [d, d], False, [0, 0], g, mask)
        r = {"sig": sig, "sleep_fwd": conv_time.gpu_us(torch, fwd)[0], "sleep_bwd": conv_time.gpu_us(torch, bwd)[0],
             "kern_fwd": kernel_us(fwd), "kern_bwd": kernel_us(bwd)}
        for kk in tot:
            tot[kk] += r[kk]
        rows.append(r)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    xb = torch.randn(n, 3, 224, 224, device="cuda")
    yb = torch.randint(0, 1000, (n,), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        step()
        torch.cuda.synchronize()
    model_conv = 0.0
    for e in p.events():
        if not str(e.device_type).endswith("CUDA"):
            continue
        l = e.name.lower()
        if any(t in l for t in ("batch_norm", "elementwise", "reduce", "multi_tensor", "pool", "softmax", "nll",
                                "optimizer")):
            continue
        model_conv += e.time_range.elapsed_us()
    res = {"model": name, "batch": n, "convs": len(convs), "totals_us": tot, "model_conv_kernels_us": model_conv,
           "rows": rows}
    print("[conv_check] %s b%d: %d convs; sleep fwd %.0f bwd %.0f us; kernels fwd %.0f bwd %.0f us; in-model %.0f us" % (
        name, n, len(convs), tot["sleep_fwd"], tot["sleep_bwd"], tot["kern_fwd"], tot["kern_bwd"], model_conv), flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
