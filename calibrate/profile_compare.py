#!/usr/bin/env python3
"""A profiled step's kernels by class next to the step-time model's columns for the same case (issue 17 part 3).

    python3 calibrate/profile_compare.py [CASE_ID_SUBSTRING ...] [--ops] [--kernels=N]
        [--profiles=data/calibration/raw/h200-step-profiles.json.gz,data/calibration/raw/h200-step-profiles-2.json.gz]
        [--fit=data/calibration/time-fit.json] [--model-ops=data/calibration/time-fit-ops.json]

Profile side (calibrate/step_profile.py): every CUDA kernel of one profiled step, by name, count and summed GPU
time; classed by name below (kernel_class). The profiler's user annotations (Optimizer.step#AdamW.step: a range,
not a kernel) are dropped. gpu_busy is the union of the kernel intervals; wall is the unprofiled step.
Model side (memplan calibrate --fit-time writes time-fit-ops.json): the case's graph costed per op name, forward
and backward columns before coefficients (engine/time/step_time.h op_breakdown), times the fitted coefficients of
time-fit.json; one micro-batch, no checkpoint recompute, launch gaps (the kernels column) apart. The host side is
the sum of the host columns (cpu_ops, cpu_host, step, micro), which the profile cannot give (it slows the host):
compare it with wall - gpu_busy.

Classes: matmul (GEMMs, and the cuBLAS kernels cuDNN runs for 1x1 convolutions), conv (cuDNN / ATen convolution
kernels with their NCHW <-> NHWC layout transforms), bn, attn, pool, optimizer, elementwise (every other kernel:
activations, adds, casts, copies, reductions, fills). The model's rows are classed by op name: linear / addmm / grouped_mm /
matmul -> matmul, conv2d* -> conv (their bias add and bias-gradient sum -> elementwise), batch_norm -> bn, sdpa* ->
attn, *pool* -> pool, optimizer.step -> optimizer, the rest -> elementwise.
The committed time-fit-ops.json and time-fit.json are the embedded model's (scripts/fit-time-model.sh writes both);
time-fit-round3.json is the third round's candidate as it was pre-registered (data/validation/NOTES-time.md).
stdlib only (gzip, json).
"""
import gzip
import json
import sys

PROFILES = "data/calibration/raw/h200-step-profiles.json.gz,data/calibration/raw/h200-step-profiles-2.json.gz"
CLASSES = ["matmul", "conv", "bn", "attn", "pool", "optimizer", "elementwise"]
HOST_COLS = {"cpu_ops", "cpu_host", "cpu_infer", "step", "micro", "pass", "token"}


def kernel_class(name):
    """The class of a profiled kernel by its name; None for a profiler annotation."""
    low = name.lower()
    if "#" in name and "(" not in name:
        return None  # Optimizer.step#AdamW.step: a user annotation's range
    if "nchwtonhwc" in low or "nhwctonchw" in low:
        return "conv"  # cuDNN's layout transforms around its NHWC kernels
    if "multi_tensor_apply" in low or "fused_adam" in low:
        return "optimizer"
    if "batch_norm" in low or "bn_fw" in low or "bn_bw" in low:
        return "bn"
    if any(k in low for k in ("fmha", "flash", "sdpa", "attention", "compute_dot_do_o", "convert_dq_to_16bits")):
        # the last two: cuDNN SDPA backward's preprocessing (dO . O) and dQ conversion, named cudnn::fusion::*
        return "attn"
    if "pool" in low or "adaptive_average" in low:
        return "pool"
    if any(k in low for k in ("implicit_gemm", "implicit_convolve", "conv2d_", "depthwise", "dgrad", "wgrad", "fprop",
                              "cudnn")) \
            and "elementwise" not in low:
        return "conv"
    if any(k in low for k in ("nvjet", "gemm", "cutlass", "cublas", "splitk")):
        return "matmul"
    return "elementwise"


def elementwise_kind(name):
    """A finer name for an elementwise-class kernel (what the model's mem columns lump together)."""
    low = name.lower()
    for key, kind in (("memset", "memset"), ("fill", "fill"), ("threshold", "relu"), ("clamp", "relu"),
                      ("reduce_kernel", "reduce"), ("copy", "copy / cast"), ("dropout", "dropout"),
                      ("masked_scale", "dropout"), ("layer_norm", "norm"), ("rms", "norm"), ("softmax", "softmax"),
                      ("gelu", "activation"), ("silu", "activation"), ("sigmoid", "activation"),
                      ("hardswish", "activation"), ("cuda_functor_add", "add"), ("cudafunctor_add", "add"),
                      ("addfunctor", "add"), ("mulfunctor", "mul"), ("div", "mul"), ("cat", "cat"),
                      ("index", "index"), ("nll_loss", "loss")):
        if key in low:
            return kind
    return "other"


def op_class(name):
    if name in ("linear", "addmm", "matmul", "grouped_mm", "bmm") or name.startswith("lora"):
        return "matmul"
    if name.startswith("conv2d"):
        return "conv"
    if name == "batch_norm":
        return "bn"
    if name.startswith("sdpa"):
        return "attn"
    if "pool" in name:
        return "pool"
    if name == "optimizer.step":
        return "optimizer"
    return "elementwise"


def model_side(ops_row, cols, coef):
    """{class: GPU ms}, launch-gap ms, host ms, and {op name: (class, count, GPU ms)} of one case."""
    by_class = {c: 0.0 for c in CLASSES}
    by_op, gaps, host = {}, 0.0, 0.0
    for o in ops_row["ops"]:
        ms = {c: 0.0 for c in CLASSES}
        for part in ("fwd", "bwd"):
            for j, v in o[part]:
                name = cols[j]
                s = coef.get(name, 0.0) * v * 1e3
                if name in HOST_COLS:
                    host += s
                elif name == "kernels":
                    gaps += s
                else:
                    cls = op_class(o["name"])
                    if cls == "conv" and name in ("mem", "mem_bwd"):
                        cls = "elementwise"  # the bias add and the bias gradient's sum
                    ms[cls] += s
        for c in CLASSES:
            by_class[c] += ms[c]
        by_op[o["name"]] = (op_class(o["name"]), o["count"], sum(ms.values()))
    return by_class, gaps, host, by_op


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict((a[2:].split("=", 1) + [""])[:2] for a in sys.argv[1:] if a.startswith("--"))
    profiles = {}
    for path in opts.get("profiles", PROFILES).split(","):
        for c in json.load(gzip.open(path))["cases"]:
            if "kernels" in c:
                profiles[c["id"]] = c
    fit = json.load(open(opts.get("fit", "data/calibration/time-fit.json")))
    coef = fit["coefficients"]
    predicted = {(r["id"], r["what"]): r for r in fit["rows"]}
    model_ops = json.load(open(opts.get("model-ops", "data/calibration/time-fit-ops.json")))
    cols = model_ops["columns"]
    ops = {r["id"]: r for r in model_ops["rows"]}
    for cid, p in profiles.items():
        if args and not any(a in cid for a in args):
            continue
        prof = {c: 0.0 for c in CLASSES}
        kinds = {}
        for name, count, us in p["kernels"]:
            cls = kernel_class(name)
            if cls is None:
                continue
            prof[cls] += us / 1e3
            if cls == "elementwise":
                k = kinds.setdefault(elementwise_kind(name), [0, 0.0])
                k[0] += count
                k[1] += us / 1e3
        pr = predicted.get((cid, "step"))
        print("== %s: wall %.1f ms (unprofiled), gpu busy %.1f, kernels %d; measured %s, predicted %s" % (
            cid, p["wall_ms"], p["gpu_busy_us"] / 1e3, p["kernel_count"],
            "%.1f" % pr["measured_ms"] if pr else "-", "%.1f" % pr["predicted_ms"] if pr else "-"))
        if cid not in ops:
            print("   (no model row: the case is not in the fit's corpus)")
            continue
        m, gaps, host, by_op = model_side(ops[cid], cols, coef)
        print("   %-12s %9s %9s %9s" % ("class", "profile", "model", "model-prof"))
        for c in CLASSES:
            print("   %-12s %9.2f %9.2f %+9.2f" % (c, prof[c], m[c], m[c] - prof[c]))
        print("   %-12s %9.2f %9.2f %+9.2f   (model: + launch gaps %.2f = %.2f)" % (
            "sum", sum(prof.values()), sum(m.values()), sum(m.values()) - sum(prof.values()), gaps,
            sum(m.values()) + gaps))
        print("   host: model %.2f ms of host columns (one micro-batch); wall - gpu busy %.2f ms" % (
            host, p["wall_ms"] - p["gpu_busy_us"] / 1e3))
        print("   profile elementwise: " + ", ".join("%s %.2f/%d" % (k, v[1], v[0]) for k, v in
                                                  sorted(kinds.items(), key=lambda x: -x[1][1])))
        if "ops" in opts:
            print("   model ops: " + ", ".join("%s %.2f/%d" % (n, v[2], v[1]) for n, v in
                                            sorted(by_op.items(), key=lambda x: -x[1][2]) if v[2] >= 0.05))
        n = int(opts.get("kernels") or 0)
        for name, count, us in sorted(p["kernels"], key=lambda k: -k[2])[:n]:
            print("   %6d %9.1f us  %-11s %s" % (count, us, kernel_class(name) or "-", name[:120]))


if __name__ == "__main__":
    main()
