#!/usr/bin/env python3
"""Host (CPU) microseconds per module of a training step, by module class (issue 17 part 3).

Why: profiled vision steps (calibrate/step_profile.py, 2026-12-01) leave the GPU idle for much of the step where
the graph is deep and its tensors small (RegNetY-1.6GF b64: 78 ms wall, 33 ms of kernels; DenseNet-121 65 / 41;
Swin-T 57 / 37): the step is bound by Python, the dispatcher and autograd, and a cuDNN convolution costs the host
far more than an elementwise op. One per-op constant cannot price both, so the cost per class is measured here.

How: a chain of L identical modules on a tiny input (GPU work negligible: the step is host-bound), L = 16 and 48;
seconds per forward (grad enabled, as in training) and per forward + backward (loss = y.sum()), synchronised,
median of 15 after warm-up; the cost of one module is the slope between the two chain lengths (the loss, the
backward's start and the synchronisation cancel). Under fp32, pure bf16 (module and input cast) and autocast bf16
(the first run, 2026-12-01, stopped at its sdpa class, whose view of SDPA's non-contiguous output failed: fp32
only; fixed and re-run with all three precisions in the ninth session).

Usage (GPU machine): python3 calibrate/host_overhead.py OUT.json [CLASS,CLASS,...]   (default: every class)
       (anywhere)     python3 calibrate/host_overhead.py --table IN.json OUT.tsv
The table (data/calibration/h200-host-overhead.tsv) is what the engine embeds: per class and precision the
forward and backward microseconds (backward = forward + backward - forward).
"""
import json
import statistics
import sys
import time

import table_io


def classes(torch):
    nn = torch.nn

    class Add(nn.Module):
        def forward(self, x):
            return x + x

    class View(nn.Module):
        def forward(self, x):
            return x.view(x.shape[0], -1).view(x.shape)

    class Permute(nn.Module):  # ConvNeXt's permute pair around its LayerNorm: views
        def forward(self, x):
            return x.permute(0, 2, 3, 1).permute(0, 3, 1, 2)

    class Sdpa(nn.Module):
        def forward(self, x):
            q = x.reshape(x.shape[0], 4, -1, 16)  # SDPA's output is not contiguous: the next block's input
            return torch.nn.functional.scaled_dot_product_attention(q, q, q).reshape(x.shape)

    class Scale(nn.Module):  # ConvNeXt's layer scale, CaiT / Swin-V2 parameters used by multiplication
        def __init__(self):
            super().__init__()
            self.g = nn.Parameter(torch.ones(1))

        def forward(self, x):
            return x * self.g

    class Softmax(nn.Module):
        def forward(self, x):
            return x.softmax(-1)

    C = 16
    img = (2, C, 8, 8)
    vec = (2, 8, 64)
    return {
        "conv3x3": (lambda: nn.Conv2d(C, C, 3, padding=1, bias=False), img),
        "conv1x1": (lambda: nn.Conv2d(C, C, 1, bias=False), img),
        "conv3x3_bias": (lambda: nn.Conv2d(C, C, 3, padding=1), img),
        "conv_grouped": (lambda: nn.Conv2d(C, C, 3, padding=1, groups=4, bias=False), img),
        "conv_depthwise": (lambda: nn.Conv2d(C, C, 3, padding=1, groups=C, bias=False), img),
        "batch_norm": (lambda: nn.BatchNorm2d(C), img),
        "relu": (lambda: nn.ReLU(), img),
        "silu": (lambda: nn.SiLU(), img),
        "add": (lambda: Add(), img),
        "view": (lambda: View(), img),
        "permute": (lambda: Permute(), img),
        "linear": (lambda: nn.Linear(64, 64), vec),
        "linear_nobias": (lambda: nn.Linear(64, 64, bias=False), vec),
        "layer_norm": (lambda: nn.LayerNorm(64), vec),
        "gelu": (lambda: nn.GELU(), vec),
        "dropout": (lambda: nn.Dropout(0.1), vec),
        "sdpa": (lambda: Sdpa(), vec),
        "max_pool": (lambda: nn.MaxPool2d(3, 1, 1), img),
        "scale_param": (lambda: Scale(), img),
        "softmax": (lambda: Softmax(), vec),
        # Under autocast each link casts two activations in C++ (the LayerNorm's bf16 input to fp32, the next
        # Linear's fp32 input to bf16) besides its weight: one activation cast's host cost is (this - linear_nobias
        # - layer_norm) / 2 at amp_bf16 (the step-time model prices it at one dispatch: NOTES-time.md, twenty-second
        # round)
        "linear_ln": (lambda: nn.Sequential(nn.Linear(64, 64, bias=False), nn.LayerNorm(64)), vec),
        # A frozen Linear (LoRA's base layer, a frozen layer of a partial fine-tune): its backward computes the input
        # gradient alone (one mm, no AccumulateGrad); the step-time model had priced it as a trained Linear's
        "linear_frozen": (lambda: frozen(nn.Linear(64, 64, bias=False)), vec),
        # peft's LoRA Linear around a frozen base (r 8, dropout 0.05): what one adapted module costs the host, against
        # the ops the graph gives it (the base linear, dropout, A, B, the scaling mul and the add)
        "lora_linear": (lambda: lora_linear(nn.Linear(64, 64, bias=False)), vec),
    }


def frozen(m):
    for p in m.parameters():
        p.requires_grad_(False)
    return m


def lora_linear(base):
    # through peft's public injection API (its Linear's constructor wants a `config` argument since 0.21, which the
    # first run of this class, raw run 5, hit): the holder's `proj` becomes peft's LoRA Linear, adapters trainable
    import peft
    import torch
    holder = torch.nn.Module()
    holder.proj = base
    holder = peft.inject_adapter_in_model(
        peft.LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05, target_modules=["proj"]), holder)
    for name, p in holder.named_parameters():
        p.requires_grad_("lora_" in name)
    return holder.proj



def chain_times(torch, make, shape, L, ac, dtype):
    model = torch.nn.Sequential(*[make() for _ in range(L)]).cuda().to(dtype).train()
    x = torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=True)  # parameter-free chains need a graph

    def fwd():
        with ac():
            return model(x)

    def fwd_bwd():
        with ac():
            y = model(x)
        y.float().sum().backward()

    out = fwd_bwd_medians(torch, fwd, fwd_bwd)
    model.zero_grad(set_to_none=True)
    return out


def chain_slope_us(times_at):
    """Microseconds one link of a chain adds: times_at(L) gives a chain of L links' {"fwd", "fwd_bwd"} seconds;
    the slope between L = 16 and 48 (the loss, the backward's start and the synchronisation cancel)."""
    a, b = times_at(16), times_at(48)
    return {k: round(1e6 * (b[k] - a[k]) / 32, 2) for k in a}


def fwd_bwd_medians(torch, fwd, fwd_bwd):
    """Seconds of each of the two callables, synchronised before and after: the median of 15 runs after 5 warm-up
    runs ({"fwd": s, "fwd_bwd": s}; ckpt_host.py times its chains the same way)."""
    out = {}
    for name, fn in (("fwd", fwd), ("fwd_bwd", fwd_bwd)):
        ts = []
        for _ in range(20):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            r = fn()
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
            del r
        out[name] = statistics.median(ts[5:])
    return out


def write_table(in_path, out_path):
    with open(in_path) as f:
        run = json.load(f)
    lines = table_io.header("memplan-host-overhead/1: host microseconds per module of a training step "
                            "(calibrate/host_overhead.py)", run["environment"], "class precision forward_us backward_us")
    for cname in sorted(run["us_per_module"]):
        for prec, v in sorted(run["us_per_module"][cname].items()):
            if "error" in v:
                continue
            lines.append(f"{cname} {prec} {max(0.0, v['fwd']):.2f} {max(0.0, v['fwd_bwd'] - v['fwd']):.2f}")
    table_io.write(out_path, lines)


def main():
    if table_io.table_mode(sys.argv, write_table):
        return
    import contextlib
    import torch
    res = {}
    for prec, ac, dt in (("fp32", contextlib.nullcontext, torch.float32),
                         ("bf16", contextlib.nullcontext, torch.bfloat16),
                         ("amp_bf16", lambda: torch.autocast("cuda", dtype=torch.bfloat16), torch.float32)):
        only = sys.argv[2].split(",") if len(sys.argv) > 2 else None
        for cname, (make, shape) in classes(torch).items():
            if only and cname not in only:
                continue
            try:
                res.setdefault(cname, {})[prec] = chain_slope_us(lambda L: chain_times(torch, make, shape, L, ac, dt))
            except Exception as e:  # noqa: BLE001  one class's failure (an API it needs) leaves the others
                print(f"[host] {cname:15s} {prec:8s} failed: {type(e).__name__}: {str(e)[:200]}", flush=True)
                res.setdefault(cname, {})[prec] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
                continue
            print(f"[host] {cname:15s} {prec:8s} " + " ".join(f"{k}={v}" for k, v in res[cname][prec].items()),
                  flush=True)
    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d")}
    with open(sys.argv[1], "w") as f:
        json.dump({"format": "memplan-host-overhead/1", "environment": env, "us_per_module": res}, f, indent=1)


if __name__ == "__main__":
    main()
