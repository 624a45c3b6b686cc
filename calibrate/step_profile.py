#!/usr/bin/env python3
"""Where a training step's time goes on the GPU: one profiled step per case (torch.profiler, Kineto), kernels
aggregated by name, so the step-time model's columns (engine/time/step_time.h) can be checked class by class.

    python3 calibrate/step_profile.py CASES.jsonl --out OUT.json [--timeout 90] [--shapes]

Per case (its own forked process: timing_corpus.run_forked; the step is timing_corpus.train_step_fn):
two warm-up steps, one unprofiled timed step (wall_ms), then one profiled step. Recorded: every CUDA kernel name
with its count and summed duration (us), the union of kernel intervals (gpu_busy_us: the GPU side of the step,
gaps excluded), the number of top-level aten ops and autograd nodes (the CPU side's dispatch count), the profiled
step's wall time (the profiler slows the CPU side; compare gpu_busy_us with the unprofiled wall_ms).
--shapes (MEMPLAN_PROFILE_SHAPES=1): also the ops by name and input shapes with their self CUDA time ("ops", the 80
largest), to set one op's in-situ kernel time against what the graph prices it at.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
import timing_corpus  # noqa: E402


def profile_case(case):
    import torch
    from torch.profiler import ProfilerActivity, profile
    step = timing_corpus.warm_train_step(case)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1e3
    shapes = os.environ.get("MEMPLAN_PROFILE_SHAPES") == "1"
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=shapes) as prof:
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
    busy = timing_corpus.busy_us(intervals)
    ops = []
    if shapes:
        for e in prof.key_averages(group_by_input_shape=True):
            us = getattr(e, "self_device_time_total", 0)
            if e.key.startswith("aten::") and us >= 100:
                ops.append([e.key, str(e.input_shapes)[:300], e.count, round(us, 1)])
        ops.sort(key=lambda r: -r[3])
    return {"ops": ops[:80],"wall_ms": round(wall_ms, 3), "profiled_wall_ms": round(prof_wall_ms, 3), "gpu_busy_us": round(busy, 1),
            "kernel_count": sum(v[0] for v in kernels.values()), "top_level_aten_ops": top_aten,
            "autograd_nodes": autograd_nodes,
            "kernels": sorted(([n, c, round(us, 1)] for n, (c, us) in kernels.items()), key=lambda r: -r[2])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--deadline-s", type=float, default=0)
    ap.add_argument("--shapes", action="store_true")
    args = ap.parse_args()
    if args.shapes:
        os.environ["MEMPLAN_PROFILE_SHAPES"] = "1"  # the forked workers read it
    cases = [json.loads(l) for l in open(args.cases) if l.strip()]
    timing_corpus.profile_cases(
        cases, profile_case, (), args.out, "memplan-step-profile/1", args.timeout, deadline_s=args.deadline_s,
        describe=lambda r: "wall %s ms, gpu busy %s us, %s kernels, %s aten, %s nodes" % (
            r.get("wall_ms"), r.get("gpu_busy_us"), r.get("kernel_count"), r.get("top_level_aten_ops"),
            r.get("autograd_nodes")))


if __name__ == "__main__":
    main()
