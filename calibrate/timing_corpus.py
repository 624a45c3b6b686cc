#!/usr/bin/env python3
"""Step-time corpus: times each case of a JSONL file ALONE on the GPU (one process per case, one after another).

    python3 calibrate/timing_corpus.py CASES.jsonl --out OUT.jsonl [--env ENV.json] [--only ID] [--warmup 2]
                                       [--steps 5] [--timeout 120] [--deadline-s S]

Training: `warmup` steps, then `steps` timed steps, each bracketed by torch.cuda.synchronize() (the step as
harness.py runs it: micro-batches of fresh random ids, forward under autocast, loss / G, backward (GradScaler
for amp_fp16), optimizer step, zero_grad(set_to_none=True); no memory bookkeeping inside the step);
measured.step_time_ms = the median of the timed steps, observed.step_times_ms all of them.
Inference of an encoder / vision model (harness.FORWARD_KINDS): measured.prefill_ms = median of 3 synchronised
forwards after one warm-up (harness._infer_forward's input and call).
Inference (causal LM): measured.prefill_ms = median of 3 synchronised forwards (use_cache=True, logits_to_keep=1)
after one warm-up; measured.decode_ms_per_token = (generate(N) - generate(1)) / (N - 1), medians of 2 each
(greedy, min_new_tokens = max_new_tokens: what a user's generate() costs per token beyond the first).
Every line gets observed.concurrent_cases = false and observed.timing = this script's settings. The model is built
as harness.build_model builds it (random weights on the GPU).
"""
import argparse
import json
import os
import re
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
import harness  # noqa: E402


def train_step_fn(case, model, kind):
    """One training step as harness.py runs it (see the module doc), as a closure; the optimizer is made here."""
    import contextlib
    import torch
    G = int(case.get("grad_accum_steps", 1) or 1)
    precision = case["precision"]
    ac_dtype = harness._autocast_dtype(precision)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = harness.make_optimizer(params, case)
    scaler = torch.amp.GradScaler("cuda") if precision == "amp_fp16" else None
    ac = (lambda: torch.autocast("cuda", dtype=ac_dtype)) if ac_dtype is not None else contextlib.nullcontext
    make_batch, fwd_loss = harness.train_batch_fns(case, model, kind)

    def step():
        for _ in range(G):
            x, y = make_batch()
            with ac():
                loss = fwd_loss(x, y)
            if scaler is not None:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            del loss, x, y
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def train_model(case):
    """A training case's model in train mode with its training options (checkpointing, ...) and LoRA applied:
    (model, kind, what apply_training_options observed). time_case and warm_train_step build through it."""
    # built as harness.measure_case builds it (CASE-FORMAT.md `load`, default to_device: on the CPU, then moved):
    # under torch.device("cuda") wav2vec2's SpecAugment met a CPU tensor (timing set 24's two speech rows failed)
    to_device = case.get("load", "to_device") == "to_device"
    model, kind = harness.build_model(case, device="cpu" if to_device else "cuda")
    if to_device:
        model = model.to("cuda")
    model.train()
    observed = harness.apply_training_options(model, kind, case)
    if case.get("lora"):
        model = harness.apply_lora(model, case)
        model.train()
    return model, kind, observed


def warm_train_step(case, warmup=2):
    """A training case's model built as time_case builds it (seeded, train_model) and its step (train_step_fn)
    after `warmup` steps: what the profiling scripts (step_profile.py, host_profile.py, host_issue.py) time or
    profile next."""
    import torch
    torch.cuda.init()
    torch.manual_seed(0)
    model, kind, _ = train_model(case)
    step = train_step_fn(case, model, kind)
    for _ in range(warmup):
        step()
    return step


def _train_times(case, model, kind, warmup, steps):
    import torch
    step = train_step_fn(case, model, kind)
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def _infer_times(case, model, kind):
    import contextlib
    import torch
    if kind in harness.FORWARD_KINDS:  # encoders / vision models: the forward alone, as a serving loop runs it
        ac_dtype = harness._autocast_dtype(case["precision"])
        ctx = (lambda: torch.autocast("cuda", dtype=ac_dtype)) if ac_dtype is not None else contextlib.nullcontext
        x = harness._forward_input(case, model, kind)
        pre = []
        with torch.inference_mode(), ctx():
            for i in range(4):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                out = harness._call_forward(model, kind, x)
                torch.cuda.synchronize()
                pre.append((time.perf_counter() - t0) * 1e3)
                del out
        return {"prefill_times_ms": [round(t, 3) for t in pre], "prefill_ms": round(statistics.median(pre[1:]), 3)}
    if kind != "causal_lm":
        raise ValueError("timed inference needs a causal LM, an encoder or a vision model")
    B, L = int(case["batch_size"]), int(case["seq_len"])
    N = int(case.get("generate_tokens") or 0)
    ac_dtype = harness._autocast_dtype(case["precision"])
    ctx = (lambda: torch.autocast("cuda", dtype=ac_dtype)) if ac_dtype is not None else contextlib.nullcontext
    ids = torch.randint(0, int(model.config.vocab_size), (B, L), device="cuda")
    res = {}
    with torch.inference_mode(), ctx():
        pre = []
        for i in range(4):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
            torch.cuda.synchronize()
            pre.append((time.perf_counter() - t0) * 1e3)
            del out
        res["prefill_times_ms"] = [round(t, 3) for t in pre]
        res["prefill_ms"] = round(statistics.median(pre[1:]), 3)
        if N > 1:
            def gen(n):
                ts = []
                for _ in range(3):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    g = model.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False)
                    torch.cuda.synchronize()
                    ts.append((time.perf_counter() - t0) * 1e3)
                    del g
                return ts
            g1, gn = gen(1), gen(N)
            res["generate1_times_ms"] = [round(t, 3) for t in g1]
            res["generateN_times_ms"] = [round(t, 3) for t in gn]
            res["decode_ms_per_token"] = round((statistics.median(gn[1:]) - statistics.median(g1[1:])) / (N - 1), 4)
    return res


def host_probe_us():
    """The host's speed in this process, beside each timed case (observed.host_probe_us): microseconds per tiny op
    as the host issues it, median of 5 chains of 2000 torch.add on a 1-element CUDA tensor, synchronised at each
    chain's end (the GPU runs each add in ~2 us, so the host's dispatch and launch set the pace), under
    inference_mode ("infer") and with autograd recording ("grad"). The same case's host-bound step moved by up to
    1.9x between device calls (NOTES-time.md): this says how fast the host of each call was."""
    import torch
    out = {}
    for name, grad in (("infer", False), ("grad", True)):
        x = torch.zeros(1, device="cuda", requires_grad=grad)
        per = []
        for _ in range(5):
            ctx = torch.inference_mode() if not grad else torch.enable_grad()
            with ctx:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                y = x
                for _ in range(2000):
                    y = torch.add(y, 1.0)
                torch.cuda.synchronize()
                per.append((time.perf_counter() - t0) * 1e6 / 2000)
            del y
        out[name] = round(statistics.median(per), 3)
    return out


def time_case(case, warmup, steps):
    import torch
    torch.cuda.init()
    torch.manual_seed(0)
    t_build = time.perf_counter()
    observed = {}
    if case["mode"] == "training":
        model, kind, opts = train_model(case)
        observed.update(opts)
    else:
        model, kind = harness.build_model(case)
        model.eval()
    torch.cuda.synchronize()
    observed["build_s"] = round(time.perf_counter() - t_build, 2)
    measured = {"params": sum(p.numel() for p in model.parameters())}
    if case["mode"] == "training":
        times = _train_times(case, model, kind, warmup, steps)
        measured["step_time_ms"] = round(statistics.median(times[warmup:]), 3)
        observed["step_times_ms"] = [round(t, 3) for t in times]
        observed["timed_steps"] = steps
        observed["warmup_steps"] = warmup
    else:
        r = _infer_times(case, model, kind)
        for k in ("prefill_ms", "decode_ms_per_token"):
            if k in r:
                measured[k] = r.pop(k)
        observed.update(r)
    # over the whole run (warm-up included): a sanity figure, not the steady-step peak the memory cases carry
    observed["run_max_allocated_mib"] = harness.mib(torch.cuda.max_memory_allocated())
    observed["run_max_reserved_mib"] = harness.mib(torch.cuda.max_memory_reserved())
    observed["concurrent_cases"] = False
    observed["host_probe_us"] = host_probe_us()
    return {"measured": measured, "observed": observed}


def _forked_body(child_fn, case, args, out_path, error_chars, traceback_chars):
    """The child's side of run_forked: never raises, always leaves a whole JSON file at out_path."""
    try:
        res = child_fn(case, *args)
    except BaseException as e:  # noqa: BLE001
        res = {"error": "%s: %s" % (type(e).__name__, str(e)[:error_chars]),
               "error_traceback": traceback.format_exc()[-traceback_chars:]}
    with open(out_path + ".tmp", "w") as f:
        json.dump(res, f)
    os.replace(out_path + ".tmp", out_path)


def run_forked(case, child_fn, args, workdir, timeout_s, error_chars=1500, traceback_chars=3000,
               timeout_error="timeout after {timeout:.0f} s",
               no_result_error="child exited with {exitcode} and no result"):
    """Runs child_fn(case, *args) in a forked child process and returns the JSON-able dict it returned, so each case
    gets a fresh CUDA context and allocator (the parent must not have initialised CUDA: harness._preimport checks).
    The dict travels through workdir/<id>.json, written as .tmp and renamed, so a half-written file is never read.
    Failures come back as records, never as exceptions: {"error", "error_traceback"} (the exception's text cut to
    error_chars, the traceback's last traceback_chars) when child_fn raised; {"error": timeout_error} when the child
    ran past timeout_s (it is killed); {"error": no_result_error} when it died without writing (a crash in CUDA or
    the interpreter). The two messages are str.format templates with fields {timeout} and {exitcode}."""
    import multiprocessing as mp
    path = os.path.join(workdir, re.sub(r"[^A-Za-z0-9_.-]", "_", case["id"]) + ".json")
    p = mp.get_context("fork").Process(target=_forked_body,
                                       args=(child_fn, case, tuple(args), path, error_chars, traceback_chars))
    p.start()
    p.join(timeout_s)
    if p.is_alive():
        p.kill()
        p.join(10)
        return {"error": timeout_error.format(timeout=timeout_s)}
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return {"error": no_result_error.format(exitcode=p.exitcode)}


def busy_us(intervals):
    """The length of the union of (start, end) intervals: the time a profiled stretch kept the GPU busy."""
    busy, end = 0.0, -1.0
    for s, t in sorted(intervals):
        if s > end:
            busy, end = busy + t - s, t
        elif t > end:
            busy, end = busy + t - end, t
    return busy


def profile_cases(cases, child_fn, child_args, out_path, schema, timeout_s, describe, deadline_s=0, tag="profile"):
    """The profiling scripts' loop (step_profile.py, host_profile.py, decode_profile.py): each case in its own forked
    process (run_forked), its record {"id", ...child_fn's dict} appended to {"format": schema, "cases": [...]}, written
    to out_path after every case (a cut run keeps what it measured), one line per case: describe(record). Cases past
    deadline_s seconds (0: none) are skipped with a line."""
    import tempfile
    harness._preimport()
    wd = tempfile.mkdtemp(prefix=tag + "-")
    out, t_all = [], time.time()
    for c in cases:
        if deadline_s and time.time() - t_all > deadline_s:
            print("[%s] deadline: skipping %s" % (tag, c["id"]), flush=True)
            continue
        t0 = time.time()
        res = run_forked(c, child_fn, child_args, wd, timeout_s, error_chars=1000, traceback_chars=2000)
        rec = dict({"id": c["id"]}, **res)
        out.append(rec)
        with open(out_path, "w") as f:
            json.dump({"format": schema, "cases": out}, f)
        print("[%s] %-40s %s (%.1f s)%s" % (tag, c["id"], describe(rec), time.time() - t0,
                                            "  " + rec["error"][:200] if "error" in rec else ""), flush=True)
    return out


def _timed_case(case, warmup, steps):
    # A case's allocator settings must be in the environment before the process first touches CUDA; a forked
    # child has not yet, so setting it here is early enough.
    if case.get("alloc_conf"):
        os.environ["PYTORCH_ALLOC_CONF"] = case["alloc_conf"]
    return time_case(case, warmup, steps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--out", required=True)
    ap.add_argument("--env")
    ap.add_argument("--only", action="append")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--quiet", action="store_true",
                    help="print no timings (held-out cases: their values are read only after the predictions)")
    ap.add_argument("--deadline-s", type=float, default=0, help="skip the remaining cases after this many seconds")
    args = ap.parse_args()
    cases = [json.loads(l) for l in open(args.cases) if l.strip()]
    if args.only:
        cases = [c for c in cases if c["id"] in args.only]
    # A capped copy times what its uncapped case times (or OOMs): memory sets' inputs are timed without them.
    capped = [c["id"] for c in cases if "memory_cap_gib" in c]
    cases = [c for c in cases if "memory_cap_gib" not in c]
    if capped:
        print("[timing] skipping %d capped cases" % len(capped), flush=True)
    harness._preimport()
    import multiprocessing as mp
    import tempfile
    wd = tempfile.mkdtemp(prefix="timing-")
    if args.env:
        p = mp.get_context("fork").Process(target=lambda: json.dump(harness.env_probe(), open(args.env, "w"), indent=1))
        p.start()
        p.join(120)
    t_all = time.time()
    results = []
    with open(args.out + ".partial", "w") as part:
        for c in cases:
            if args.deadline_s and time.time() - t_all > args.deadline_s:
                print("[timing] deadline: skipping %s" % c["id"], flush=True)
                continue
            t0 = time.time()
            res = run_forked(c, _timed_case, (args.warmup, args.steps), wd, args.timeout)
            out = {k: v for k, v in c.items() if not k.startswith("_")}
            out.update(res)
            out.setdefault("observed", {})["wall_s"] = round(time.time() - t0, 1)
            results.append(out)
            part.write(json.dumps(out) + "\n")
            part.flush()
            m = {} if args.quiet else out.get("measured", {})
            print("[timing] %-44s %s  (%.1f s)" % (c["id"], (res.get("error") or "")[:200] or
                  " ".join("%s=%s" % (k, m[k]) for k in ("step_time_ms", "prefill_ms", "decode_ms_per_token") if k in m),
                  time.time() - t0), flush=True)
    with open(args.out, "w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    print("[timing] %d cases in %.1f s" % (len(results), time.time() - t_all), flush=True)


if __name__ == "__main__":
    main()
