#!/usr/bin/env python3
"""Records every caching-allocator event of one whole validation case, from before the model is built to the
end (harness.measure_case, training or inference), with addresses (stack frames with --frames: context "alloc", since None records none): the data to check
how cudaMalloc places segments (engine/alloc/device_va.h) and to replay a run from an empty allocator.
Usage (GPU machine): python3 calibrate/record_case_events.py CASES.jsonl CASE_ID OUT.json.gz [--frames]
--frames: each event also carries its innermost four Python frames inside site-packages ("file:line:function"),
as record_trace.py writes them: which statement allocated (a new family's first miss)."""
import gzip
import json
import re
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def main():
    import torch  # importing does not initialise CUDA
    cases_path, case_id, out_path = sys.argv[1:4]
    frames = "--frames" in sys.argv[4:]
    case = next(c for c in harness.read_jsonl(cases_path) if c["id"] == case_id)
    if case.get("alloc_conf"):  # before CUDA is first touched, as the harness's per-case child does
        os.environ["PYTORCH_ALLOC_CONF"] = case["alloc_conf"]
    torch.cuda.init()
    torch.cuda.memory._record_memory_history(max_entries=4000000, context="alloc" if frames else None, stacks="python")
    res = harness.measure_case(case)
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    keep = {"alloc", "free_completed", "segment_alloc", "segment_free", "segment_map", "segment_unmap"}
    def where(e):
        return [f"{re.split('(?:site|dist)-packages/', fr['filename'])[-1]}:{fr['line']}:{fr['name']}" for fr in e.get("frames", [])
                if "-packages/" in fr["filename"]][:4]

    events = [[e["action"], e["size"], e["addr"], e["stream"]] + ([where(e)] if frames else [])
              for e in snap["device_traces"][0] if e["action"] in keep]
    with gzip.open(out_path, "wt") as f:
        json.dump({"id": case_id, "torch": torch.__version__, "note": "every allocator event of the whole case "
                   "(measure_case); each: [action, size_bytes, addr, stream] (+ [frames] with --frames); case: the "
                   "measured case",
                   "peak_reserved_mib": res["measured"].get("peak_reserved_mib"),
                   "case": dict(case, **res), "events": events}, f)
    print("wrote", out_path, len(events), "events, peak reserved", res["measured"].get("peak_reserved_mib"))


if __name__ == "__main__":
    main()
