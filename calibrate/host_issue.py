#!/usr/bin/env python3
"""Is a training step host-bound, and where does its host time go (issue 17 part 3, ninth session)?

Why: held out 13's largest misses are steps the model reads as GPU-bound that run much longer than their kernels
(GPT-2 XL bf16 checkpointed b2: 283 ms measured, about 147 modelled; T5-base -17 %, Swin-T -13 %). Three questions
per case, each answered by a measurement rather than a profile's inflated wall:

- issue_ms: the time step() takes to return after a synchronize, before the closing synchronize. If it is close
  to wall_ms the host issues the step no faster than the GPU runs it (host-bound, or a hidden sync).
- syncs: the number of synchronizing CUDA calls in one step (torch.cuda.set_sync_debug_mode("warn") turns each
  into a warning; counted, not raised). A sync serialises host and GPU: the step costs host + GPU around it.
- python: one step under cProfile, the top functions by own time (the profiler's overhead inflates them; compare
  shares). Shows Python-side costs torch.profiler's aten view cannot: checkpoint hooks, module __call__, hooks.

    python3 calibrate/host_issue.py CASES.jsonl --out OUT.json [--steps 4] [--top 25]

Per case (forked, timing_corpus.run_forked; the step is timing_corpus.train_step_fn): two warm-up steps, --steps
timed steps (issue_ms and wall_ms each), one step with sync counting, one under cProfile.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
import timing_corpus  # noqa: E402


def issue_case(case, steps, top):
    import cProfile
    import pstats
    import warnings
    import torch
    step = timing_corpus.warm_train_step(case)
    issue, wall = [], []
    for _ in range(steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        issue.append(round((t1 - t0) * 1e3, 3))
        wall.append(round((t2 - t0) * 1e3, 3))
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        step()
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    sync_sites = {}
    for w in caught:
        key = "%s:%s" % (os.path.basename(w.filename), w.lineno)
        sync_sites[key] = sync_sites.get(key, 0) + 1
    prof = cProfile.Profile()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    prof.enable()
    step()
    prof.disable()
    torch.cuda.synchronize()
    prof_ms = (time.perf_counter() - t0) * 1e3
    st = pstats.Stats(prof)
    rows = []
    for (fname, line, func), (cc, nc, tt, ct, _) in st.stats.items():
        rows.append(["%s:%d:%s" % (os.path.basename(fname), line, func), nc, round(tt * 1e6, 1), round(ct * 1e6, 1)])
    rows.sort(key=lambda r: -r[2])
    med = lambda v: sorted(v)[len(v) // 2]
    return {"issue_ms": issue, "wall_ms": wall, "issue_median_ms": med(issue), "wall_median_ms": med(wall),
            "syncs": len(caught), "sync_sites": sorted(sync_sites.items(), key=lambda kv: -kv[1])[:10],
            "cprofile_wall_ms": round(prof_ms, 3), "cprofile_total_us": round(sum(r[2] for r in rows), 1),
            "python": rows[:top]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--deadline-s", type=float, default=0)
    args = ap.parse_args()
    import json
    cases = [json.loads(l) for l in open(args.cases) if l.strip()]
    timing_corpus.profile_cases(
        cases, issue_case, (args.steps, args.top), args.out, "memplan-host-issue/1", args.timeout,
        deadline_s=args.deadline_s, tag="issue",
        describe=lambda r: "issue %s ms, wall %s ms, %s syncs" % (
            r.get("issue_median_ms"), r.get("wall_median_ms"), r.get("syncs")))


if __name__ == "__main__":
    main()
