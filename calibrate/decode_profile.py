#!/usr/bin/env python3
"""Where a decode token's time goes (issue 17 part 3): generate(N) and generate(1) profiled, per-token difference.

Why: held out 3 (2026-12-01, fifth session) measured Qwen3-1.7B b4 s2048 at 44.8 ms per decoded token and
Gemma-3-1B b8 s1024 at 54.4, where the model said 25.3 and 33.9 (its tuning decode rows were within 2 %). A decode
step is host-bound, so the question is how many ops the host dispatches per token and how long the GPU works.

    python3 calibrate/decode_profile.py CASES.jsonl --out OUT.json [--timeout 120]

Per inference case (its own forked process, timing_corpus.run_forked): the model built as timing_corpus builds it,
one warm-up generate(N); then generate(1) and generate(N) unprofiled (wall), then each once under torch.profiler.
The generate(1) run's kernels by name are kept too (prefill_kernels): the prefill's GPU work.
Per token = (N-run - 1-run) / (N - 1) of: wall ms, top-level aten ops (CPU events without a parent), CUDA kernels,
kernel time (us) and the union of kernel intervals (gpu busy). The 40 top-level aten op names by per-token count
are kept, so the model's dispatch count can be checked name by name.
"""
import argparse
import contextlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
import harness  # noqa: E402
import timing_corpus  # noqa: E402


def _profiled(torch, fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    ops, kernels, intervals, kernel_us, by_name = {}, 0, [], 0.0, {}
    for e in prof.events():
        if str(getattr(e, "device_type", "")).endswith("CUDA"):
            kernels += 1
            k = by_name.setdefault(e.name, [0, 0.0])
            k[0] += 1
            k[1] += e.time_range.elapsed_us()
            kernel_us += e.time_range.elapsed_us()
            intervals.append((e.time_range.start, e.time_range.end))
        elif e.name.startswith("aten::") and e.cpu_parent is None:
            ops[e.name] = ops.get(e.name, 0) + 1
    return {"ops": ops, "kernels": kernels, "kernel_us": kernel_us, "busy_us": timing_corpus.busy_us(intervals),
            "by_name": by_name}


def profile_decode(case):
    import torch
    torch.cuda.init()
    torch.manual_seed(0)
    model, kind = harness.build_model(case)
    model.eval()
    B, L, N = int(case["batch_size"]), int(case["seq_len"]), int(case["generate_tokens"])
    ac = harness._autocast_dtype(case["precision"])
    ctx = (lambda: torch.autocast("cuda", dtype=ac)) if ac is not None else contextlib.nullcontext
    ids = torch.randint(0, int(model.config.vocab_size), (B, L), device="cuda")

    def gen(n):
        return lambda: model.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False)

    res = {}
    with torch.inference_mode(), ctx():
        gen(N)()
        walls = {}
        for n in (1, N):
            ts = []
            for _ in range(2):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                gen(n)()
                torch.cuda.synchronize()
                ts.append((time.perf_counter() - t0) * 1e3)
            walls[n] = min(ts)
        p1, pn = _profiled(torch, gen(1)), _profiled(torch, gen(N))
    d = float(N - 1)
    res["wall_ms_per_token"] = round((walls[N] - walls[1]) / d, 3)
    res["aten_ops_per_token"] = round((sum(pn["ops"].values()) - sum(p1["ops"].values())) / d, 1)
    res["kernels_per_token"] = round((pn["kernels"] - p1["kernels"]) / d, 1)
    res["kernel_us_per_token"] = round((pn["kernel_us"] - p1["kernel_us"]) / d, 1)
    res["gpu_busy_us_per_token"] = round((pn["busy_us"] - p1["busy_us"]) / d, 1)
    per_op = {k: round((v - p1["ops"].get(k, 0)) / d, 2) for k, v in pn["ops"].items()}
    res["top_ops_per_token"] = sorted(([k, v] for k, v in per_op.items() if v), key=lambda r: -r[1])[:40]
    # generate(1) is the prefill alone (one forward over the prompt, then the first token's sampling): its
    # kernels by name, in step_profile.py's [name, count, us] form, for the prefill's class-by-class check.
    res["prefill_wall_ms"] = round(walls[1], 3)
    res["prefill_gpu_busy_us"] = round(p1["busy_us"], 1)
    res["prefill_kernels"] = sorted(([k, v[0], round(v[1], 1)] for k, v in p1["by_name"].items()),
                                    key=lambda r: -r[2])
    res["transformers_attn"] = str(getattr(model.config, "_attn_implementation", ""))
    res["cache"] = str(getattr(model.generation_config, "cache_implementation", ""))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    cases = [json.loads(l) for l in open(args.cases) if l.strip()]
    cases = [c for c in cases if c.get("mode") == "inference" and int(c.get("generate_tokens") or 0) > 1]
    timing_corpus.profile_cases(
        cases, profile_decode, (), args.out, "memplan-decode-profile/1", args.timeout, tag="decode",
        describe=lambda r: "%s ms/token, %s aten ops, %s kernels, busy %s us" % (
            r.get("wall_ms_per_token"), r.get("aten_ops_per_token"), r.get("kernels_per_token"),
            r.get("gpu_busy_us_per_token")))


if __name__ == "__main__":
    main()
