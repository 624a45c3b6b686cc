#!/usr/bin/env python3
"""Prints a distributed recording (record_dist_events.py) as a readable timeline: every alloc / free of at least
--min-mib (default 1) with its index, the stream (S0 = the default stream, S1, S2, ... in order of first use: for
FSDP2 S1 is the all-gather stream, S2 the reduce-scatter stream), the size in bytes, the live bytes on every stream
after it, and, for recordings made with --frames, a label from the innermost FSDP / transformers / optimizer
frame. --step K prints only training step K (1-3), delimited by the batch allocations of harness.make_batch
(recordings with frames only; others print the whole run). Standard library only (runs without torch).
Usage: python3 calibrate/dist_events_summary.py REC.json.gz [--min-mib 1] [--step 3] [--streams]"""
import argparse
import gzip
import json

MIB = float(1 << 20)


def label(frames):
    for f in frames or []:
        if "_fully_shard/" in f or "/optim/" in f or "parallel/" in f or "distributed/tensor" in f:
            return f.split("/")[-1]
    for f in frames or []:
        if "transformers/" in f or "calibrate/" in f:
            return f.split("/")[-1]
    return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rec")
    ap.add_argument("--min-mib", type=float, default=1.0)
    ap.add_argument("--step", type=int)
    ap.add_argument("--streams", action="store_true", help="only the per-stream totals")
    a = ap.parse_args()
    r = json.load(gzip.open(a.rec, "rt"))
    ev = r["events"]
    names = {0: "S0"}
    for e in ev:
        if e[3] not in names:
            names[e[3]] = "S%d" % len(names)
    starts = [i for i, e in enumerate(ev) if e[0] == "alloc" and len(e) > 4 and any("make_batch" in f for f in e[4])]
    lo, hi = 0, len(ev)
    if a.step and starts:
        lo = starts[a.step - 1]
        hi = starts[a.step] if a.step < len(starts) else len(ev)
    live, cur = {}, {s: 0 for s in names}
    for i, e in enumerate(ev):
        act, size, addr, st = e[:4]
        if act == "alloc":
            live[addr] = (size, st)
            cur[st] += size
        elif act == "free_completed" and addr in live:
            size, st = live.pop(addr)
            cur[st] -= size
        else:
            continue
        if lo <= i < hi and size >= a.min_mib * MIB and not a.streams:
            print("%5d %-5s %s %11d  live %s  %s" % (i, act[:5], names[e[3]], size,
                                                    " ".join("%s=%.1f" % (names[s], cur[s] / MIB) for s in names),
                                                    label(e[4] if len(e) > 4 else None)))
    print("streams:", {names[s]: s for s in names}, "step starts:", starts,
          "observed live peaks MiB:", r["case"].get("observed", {}).get("stream_live_peak_mib"))


if __name__ == "__main__":
    main()
