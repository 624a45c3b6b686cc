#!/usr/bin/env python3
"""Records every caching-allocator event of one whole distributed case (dist_harness.measure_dist_case: fake
process group, rank 0), from before the model is built to the end, as record_case_events.py does for single-GPU
cases: events [action, size_bytes, addr, stream] (stream 0 = the default stream; FSDP2's all-gather copy-in,
all-gather and reduce-scatter streams and DDP's have their own ids). With --frames each event also carries up to
4 innermost Python frames inside torch / transformers ("file:line:function"), to label what allocated it.
`case.observed.stream_live_peak_mib` gives, per stream, the peak of the bytes allocated on that stream and not yet
freed (from the events). Usage (GPU machine):
    python3 calibrate/record_dist_events.py CASES.jsonl CASE_ID OUT.json.gz [--frames]"""
import gzip
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_harness  # noqa: E402
import harness  # noqa: E402


def _frames(e):
    out = []
    for fr in e.get("frames") or []:
        fn = fr.get("filename", "")
        k = max(fn.rfind("/torch/"), fn.rfind("/transformers/"), fn.rfind("/calibrate/"))
        if k < 0:
            continue
        out.append("%s:%s:%s" % (fn[k + 1:], fr.get("line"), fr.get("name")))
        if len(out) == 4:
            break
    return out


def stream_peaks(events):
    live, peak, cur = {}, {}, {}
    for ev in events:
        a, size, addr, stream = ev[0], ev[1], ev[2], ev[3]
        if a == "alloc":
            live[addr] = (size, stream)
            cur[stream] = cur.get(stream, 0) + size
            peak[stream] = max(peak.get(stream, 0), cur[stream])
        elif a == "free_completed" and addr in live:
            sz, st = live.pop(addr)
            cur[st] -= sz
    return {str(k): harness.mib(v) for k, v in sorted(peak.items())}


def main():
    import torch
    cases_path, case_id, out_path = sys.argv[1:4]
    frames = "--frames" in sys.argv[4:]
    case = next(c for c in harness.read_jsonl(cases_path) if c["id"] == case_id)
    torch.cuda.init()
    torch.cuda.memory._record_memory_history(max_entries=4000000, context="alloc" if frames else None,
                                             stacks="python")
    try:
        res = dist_harness.measure_dist_case(case)
    except BaseException as e:  # noqa: BLE001
        res = {"error": "%s: %s" % (type(e).__name__, str(e)[:1500]), "traceback": traceback.format_exc()[-4000:]}
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    keep = {"alloc", "free_completed", "segment_alloc", "segment_free", "segment_map", "segment_unmap"}
    events = []
    for e in snap["device_traces"][0]:
        if e["action"] in keep:
            ev = [e["action"], e["size"], e["addr"], e["stream"]]
            if frames:
                ev.append(_frames(e))
            events.append(ev)
    res["_concurrent"] = int(os.environ.get("MEMPLAN_DIST_JOBS", "1")) > 1  # record_dist_cases.sh: several at once
    out = harness.merge(case, res)
    if "observed" in out:
        out["observed"]["stream_live_peak_mib"] = stream_peaks(events)
    with gzip.open(out_path, "wt") as f:
        json.dump({"id": case_id, "torch": torch.__version__,
                   "note": "every allocator event of the whole distributed case (dist_harness.measure_dist_case, "
                           "fake process group, rank 0); each: [action, size_bytes, addr, stream%s]; case: the "
                           "measured case" % (", frames" if frames else ""),
                   "peak_reserved_mib": (res.get("measured") or {}).get("peak_reserved_mib"),
                   "case": out, "events": events}, f)
    print("wrote", out_path, len(events), "events;", harness._status_line(case, res), flush=True)


if __name__ == "__main__":
    main()
