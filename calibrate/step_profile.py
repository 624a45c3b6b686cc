#!/usr/bin/env python3
"""Where a training step's time goes on the GPU: one profiled step per case (torch.profiler, Kineto), kernels
aggregated by name, so the step-time model's columns (engine/time/step_time.h) can be checked class by class.

    python3 calibrate/step_profile.py CASES.jsonl --out OUT.json [--timeout 90]

Per case (its own forked process: timing_corpus.run_forked; the step is timing_corpus.train_step_fn):
two warm-up steps, one unprofiled timed step (wall_ms), then one profiled step. Recorded: every CUDA kernel name
with its count and summed duration (us), the union of kernel intervals (gpu_busy_us: the GPU side of the step,
gaps excluded), the number of top-level aten ops and autograd nodes (the CPU side's dispatch count), the profiled
step's wall time (the profiler slows the CPU side; compare gpu_busy_us with the unprofiled wall_ms).
"""
import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
import harness  # noqa: E402
import timing_corpus  # noqa: E402


def profile_case(case):
    import torch
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.init()
    torch.manual_seed(0)
    model, kind = harness.build_model(case)
    model.train()
    harness.apply_training_options(model, kind, case)
    if case.get("lora"):
        model = harness.apply_lora(model, case)
        model.train()
    step = timing_corpus.train_step_fn(case, model, kind)
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1e3
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        prof_wall_ms = (time.perf_counter() - t0) * 1e3
    kernels, intervals = {}, []
    top_aten = autograd_nodes = 0
    for e in prof.events():
        dev = str(getattr(e, "device_type", ""))
        if dev.endswith("CUDA"):
            k = kernels.setdefault(e.name, [0, 0.0])
            k[0] += 1
            k[1] += e.time_range.elapsed_us()
            intervals.append((e.time_range.start, e.time_range.end))
        elif e.name.startswith("aten::") and e.cpu_parent is None:
            top_aten += 1
        elif e.name.startswith("autograd::engine::evaluate_function"):
            autograd_nodes += 1
    busy, end = 0.0, -1.0
    for s, t in sorted(intervals):
        if s > end:
            busy += t - s
            end = t
        elif t > end:
            busy += t - end
            end = t
    return {"wall_ms": round(wall_ms, 3), "profiled_wall_ms": round(prof_wall_ms, 3), "gpu_busy_us": round(busy, 1),
            "kernel_count": sum(v[0] for v in kernels.values()), "top_level_aten_ops": top_aten,
            "autograd_nodes": autograd_nodes,
            "kernels": sorted(([n, c, round(us, 1)] for n, (c, us) in kernels.items()), key=lambda r: -r[2])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--deadline-s", type=float, default=0)
    args = ap.parse_args()
    cases = [json.loads(l) for l in open(args.cases) if l.strip()]
    harness._preimport()
    wd = tempfile.mkdtemp(prefix="profile-")
    out, t_all = [], time.time()
    for c in cases:
        if args.deadline_s and time.time() - t_all > args.deadline_s:
            print("[profile] deadline: skipping %s" % c["id"], flush=True)
            continue
        t0 = time.time()
        res = timing_corpus.run_forked(c, profile_case, (), wd, args.timeout, error_chars=1000, traceback_chars=2000,
                                       timeout_error="timeout", no_result_error="no result (exit {exitcode})")
        res = dict({"id": c["id"], "case": c}, **res)
        out.append(res)
        with open(args.out, "w") as f:
            json.dump({"format": "memplan-step-profile/1", "cases": out}, f)
        print("[profile] %-40s wall %s ms, gpu busy %s us, %s kernels, %s aten, %s nodes (%.1f s)%s" % (
            c["id"], res.get("wall_ms"), res.get("gpu_busy_us"), res.get("kernel_count"), res.get("top_level_aten_ops"),
            res.get("autograd_nodes"), time.time() - t0, "  " + res["error"][:160] if "error" in res else ""), flush=True)


if __name__ == "__main__":
    main()
