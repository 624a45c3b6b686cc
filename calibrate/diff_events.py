#!/usr/bin/env python3
"""Aligns memplan's replayed allocator events with a run recorded on the GPU and prints where they differ.

  python3 calibrate/record_case_events.py CASES.jsonl ID run.json.gz          # on the GPU machine
  memplan validate CASES.jsonl --only ID --events-out ours.txt                 # here
  python3 calibrate/diff_events.py run.json.gz ours.txt [--min-mib 1] [--max 40] [--context]

Both streams are reduced to (alloc|free, size rounded to 512 B) for blocks of at least --min-mib, and runs of
consecutive frees are sorted (their order cannot change the allocator's state), so what remains are
differences that can: a missing or extra allocation, or a free on the wrong side of an allocation. Each
difference shows our events' location (phase:op@layer) from --events-out. Standard library only.
"""
import argparse
import difflib
import gzip
import json


def recorded(path, min_bytes):
    with gzip.open(path, "rt") as f:
        run = json.load(f)
    out = []
    for action, size, *_ in run["events"]:
        if action in ("alloc", "free_completed") and size >= min_bytes:
            out.append(("a" if action == "alloc" else "f", (size + 511) // 512 * 512, ""))
    return out


def replayed(path, min_bytes):
    out = []
    with open(path) as f:
        for line in f:
            kind, size, _block, where = line.split()[:4]
            if int(size) >= min_bytes:
                out.append((kind, (int(size) + 511) // 512 * 512, where))
    return out


def canonical(events):
    """Sorts each run of consecutive frees by size: frees with no allocation between them commute."""
    out, frees = [], []
    for e in events:
        if e[0] == "f":
            frees.append(e)
            continue
        out += sorted(frees, key=lambda x: x[1])
        frees = []
        out.append(e)
    return out + sorted(frees, key=lambda x: x[1])


def label(e, with_where):
    text = f"{e[0]}{e[1] / 2**20:.2f}"
    return f"{text}@{e[2]}" if with_where and e[2] else text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("recorded")
    ap.add_argument("replayed")
    ap.add_argument("--min-mib", type=float, default=1.0, help="ignore blocks below this size (default 1)")
    ap.add_argument("--max", type=int, default=40, help="differences to print (default 40)")
    ap.add_argument("--context", action="store_true", help="print the aligned streams around each difference")
    args = ap.parse_args()
    min_bytes = int(args.min_mib * 2**20)
    real = canonical(recorded(args.recorded, min_bytes))
    ours = canonical(replayed(args.replayed, min_bytes))
    sm = difflib.SequenceMatcher(a=[e[:2] for e in real], b=[e[:2] for e in ours], autojunk=False)
    shown = 0
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        shown += 1
        if shown > args.max:
            continue
        print(f"{op:7s} recorded[{i1}:{i2}] {[label(e, False) for e in real[i1:i2]][:8]}  "
              f"ours[{j1}:{j2}] {[label(e, True) for e in ours[j1:j2]][:8]}")
        if args.context:
            for k in range(max(0, j1 - 4), min(len(ours), j2 + 4)):
                print(f"          ours {k:6d} {label(ours[k], True)}")
    print(f"{len(real)} recorded and {len(ours)} replayed events of >= {args.min_mib} MiB; {shown} differences")


if __name__ == "__main__":
    main()
