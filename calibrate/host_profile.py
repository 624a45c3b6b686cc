#!/usr/bin/env python3
"""Where a host-bound training step's CPU time goes (issue 17 part 3): one step under torch.profiler (CPU only),
ops by self CPU time.

Why: DenseNet-201 amp b24 takes 130 ms a step in two device calls (held out 3, 2026-12-01) with 36 ms of kernels;
the model's host side gives 73 ms. DenseNet-121 and -169 miss by less, in opposite directions; the per-op costs
of calibrate/host_overhead.py's module chains do not explain it.

    python3 calibrate/host_profile.py CASES.jsonl --out OUT.json [--top 40]

Per case (forked, timing_corpus.run_forked; the step is timing_corpus.train_step_fn): two warm-up steps, one
unprofiled step (wall_ms), one profiled: per op name (aten ops, autograd nodes, Python functions are not
recorded) count, self CPU us and total CPU us, the top ones by self CPU time; the profiled wall (the profiler's
own cost inflates it: compare shares, not absolute times).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
import timing_corpus  # noqa: E402


def host_case(case, top):
    import torch
    from torch.profiler import ProfilerActivity, profile
    step = timing_corpus.warm_train_step(case)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - t0) * 1e3
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        prof_ms = (time.perf_counter() - t0) * 1e3
    rows = [[e.key, e.count, round(e.self_cpu_time_total, 1), round(e.cpu_time_total, 1)]
            for e in prof.key_averages()]
    rows.sort(key=lambda r: -r[2])
    return {"wall_ms": round(wall_ms, 3), "profiled_wall_ms": round(prof_ms, 3),
            "self_cpu_us_total": round(sum(r[2] for r in rows), 1), "ops": rows[:top]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--out", required=True)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    cases = [json.loads(l) for l in open(args.cases) if l.strip()]
    timing_corpus.profile_cases(
        cases, host_case, (args.top,), args.out, "memplan-host-profile/1", args.timeout, tag="host",
        describe=lambda r: "wall %s ms, profiled %s ms, self cpu %s us" % (
            r.get("wall_ms"), r.get("profiled_wall_ms"), r.get("self_cpu_us_total")))


if __name__ == "__main__":
    main()
