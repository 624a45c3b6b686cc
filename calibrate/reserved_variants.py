#!/usr/bin/env python3
"""Diagnostics for issue 17 part 1: does peak reserved memory depend on how the run is driven, when the allocated
peak does not? Runs one case of a JSONL file in one variant, in this (fresh) process, and prints one JSON line:
{id, variant, peak_allocated_mib, peak_reserved_mib, num_alloc_retries}.
Variants (training unless noted):
  base          calibrate/harness.py's measure_case, as every corpus case is measured
  gc_off        the same with Python's cyclic garbage collector disabled (gc.disable())
  gc_each       the same with gc.collect() after every backward (patched into loss.backward)
  plain         a plain user loop: out = model(ids, labels=ids); (out.loss / G).backward(); no del, no peak
                resets; out / loss / ids stay referenced until the next micro-batch rebinds them
  plain10       plain, 10 optimizer steps
  cpu_build     the model built on the CPU, then .to("cuda") (and .to(dtype) for bf16 / fp16)
  cast_build    the model built in fp32 on the GPU, then .to(dtype) (bf16 / fp16 cases)
  cublas_cfg    CUBLAS_WORKSPACE_CONFIG=:4096:8 (set before CUDA starts)
  gen_only      inference: generate() alone (no separate prefill forward)
Usage (GPU machine): python3 calibrate/reserved_variants.py CASES.jsonl CASE_ID VARIANT"""
import gc
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def plain_train(case, model, steps):
    import contextlib
    import torch
    import harness
    B, L, G = int(case["batch_size"]), int(case["seq_len"]), int(case.get("grad_accum_steps", 1) or 1)
    V = int(model.config.vocab_size)
    ac = harness._autocast_dtype(case["precision"])
    params = [p for p in model.parameters() if p.requires_grad]
    opt = harness.make_optimizer(params, case)
    scaler = torch.amp.GradScaler("cuda") if case["precision"] == "amp_fp16" else None
    ctx = (lambda: torch.autocast("cuda", dtype=ac)) if ac is not None else contextlib.nullcontext
    for _ in range(steps):
        for _ in range(G):
            ids = torch.randint(0, V, (B, L), device="cuda")
            with ctx():
                out = model(input_ids=ids, labels=ids)
            loss = out.loss / G
            if scaler is not None:
                scaler.scale(loss).backward()
            else:
                loss.backward()
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()


def main():
    cases_path, cid, variant = sys.argv[1:4]
    if variant == "cublas_cfg":
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    import torch
    import harness
    case = next(c for c in harness.read_jsonl(cases_path) if c["id"] == cid)
    torch.cuda.init()
    if variant == "gc_off":
        gc.disable()
    if variant == "gc_each":
        orig = torch.Tensor.backward

        def bw(self, *a, **k):
            r = orig(self, *a, **k)
            gc.collect()
            return r
        torch.Tensor.backward = bw
    if variant in ("cpu_build", "cast_build"):
        orig_build = harness.build_model

        def build(c):
            import contextlib
            dt = harness._dtype_of(c["precision"])
            c2 = dict(c, precision="fp32")
            if variant == "cpu_build":
                model, kind = orig_build(c2, device="cpu")
                model = model.to("cuda")
            else:
                model, kind = orig_build(c2)
            if dt != torch.float32:
                model = model.to(dt)
                torch.set_default_dtype(dt)
            torch.cuda.synchronize()
            return model, kind
        harness.build_model = build
    res = {"id": cid, "variant": variant}
    if variant in ("plain", "plain10"):
        torch.manual_seed(0)
        model, kind = harness.build_model(case)
        model.train()
        harness.apply_training_options(model, kind, case)
        plain_train(case, model, 10 if variant == "plain10" else 3)
        m = {"peak_allocated_mib": harness.mib(torch.cuda.max_memory_allocated()),
             "peak_reserved_mib": harness.mib(torch.cuda.max_memory_reserved())}
    elif variant == "gen_only":
        torch.manual_seed(0)
        model, kind = harness.build_model(case)
        model.eval()
        ids = torch.randint(0, int(model.config.vocab_size), (int(case["batch_size"]), int(case["seq_len"])),
                            device="cuda")
        N = int(case.get("generate_tokens") or 1)
        with torch.inference_mode():
            model.generate(ids, max_new_tokens=N, min_new_tokens=N, do_sample=False)
        torch.cuda.synchronize()
        m = {"peak_allocated_mib": harness.mib(torch.cuda.max_memory_allocated()),
             "peak_reserved_mib": harness.mib(torch.cuda.max_memory_reserved())}
    else:
        m = harness.measure_case(case)["measured"]
    res.update({k: m.get(k) for k in ("peak_allocated_mib", "peak_reserved_mib", "weights_mib")})
    res["num_alloc_retries"] = int(torch.cuda.memory_stats().get("num_alloc_retries", 0))
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
