#!/usr/bin/env python3
"""Records the caching-allocator events of one steady-state training step (step 3) of a validation case, in the
format of data/validation/traces/ (CASE-FORMAT.md, "Allocator traces"), to check a replay op by op.
Usage (GPU machine): python3 calibrate/record_trace.py CASES.jsonl CASE_ID OUT.json.gz [--from-start]
--from-start records everything from before the model is built through three steps (phase marks per step,
e.g. "forward_start_1"), to compare the first steps' segment growth with a replay."""
import gzip
import json
import re
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def main():
    import torch
    import torch.nn.functional as F
    cases_path, case_id, out_path = sys.argv[1:4]
    from_start = "--from-start" in sys.argv
    case = next(c for c in harness.read_jsonl(cases_path) if c["id"] == case_id)
    if from_start:
        torch.cuda.memory._record_memory_history(max_entries=1000000, stacks="python")
    model, kind = harness.build_model(case)
    model.train()
    harness.apply_training_options(model, kind, case)
    opt = harness.make_optimizer([p for p in model.parameters() if p.requires_grad], case)
    ac_dtype = harness._autocast_dtype(case["precision"])
    B = int(case["batch_size"])
    phase = {}

    def step(record, suffix=""):
        if kind == "vision":
            S = int(case.get("image_size", 224))
            x = torch.randn(B, 3, S, S, device="cuda", dtype=harness._dtype_of(case["precision"]))
            y = torch.randint(0, int(case.get("num_classes", 1000)), (B,), device="cuda")
        else:
            x = torch.randint(0, int(model.config.vocab_size), (B, int(case["seq_len"])), device="cuda")
        mark = (lambda k: phase.__setitem__(k + suffix, torch.cuda.memory._snapshot()["device_traces"][0].__len__())) \
            if record else (lambda k: None)
        mark("forward_start")
        with torch.autocast("cuda", dtype=ac_dtype, enabled=ac_dtype is not None):
            loss = F.cross_entropy(model(x), y) if kind == "vision" else model(input_ids=x, labels=x).loss
        mark("backward_start")
        loss.backward()
        mark("optimizer_start")
        opt.step()
        mark("zero_grad_start")
        opt.zero_grad(set_to_none=True)

    if from_start:
        step(True, "_1")
        step(True, "_2")
        step(True, "_3")
    else:
        step(False)
        step(False)
        torch.cuda.synchronize()
        torch.cuda.memory._record_memory_history(max_entries=1000000, stacks="python")
        step(True)
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    events = []
    for e in snap["device_traces"][0]:
        frames = [f"{re.split('(?:site|dist)-packages/', fr['filename'])[-1]}:{fr['line']}:{fr['name']}" for fr in e.get("frames", [])
                  if "-packages/" in fr["filename"]][:4]
        events.append([e["action"], e["size"], e["addr"], e["stream"], frames])
    segs = [{"total_size": s["total_size"], "allocated_size": s["allocated_size"],
             "blocks": [[b["size"], b["state"]] for b in s["blocks"]]} for s in snap["segments"]]
    with gzip.open(out_path, "wt") as f:
        json.dump({"id": case_id, "torch": torch.__version__, "phase_event_index": phase, "segments_at_end": segs,
                   "events": events}, f)
    print("wrote", out_path, len(events), "events", phase)


if __name__ == "__main__":
    main()
