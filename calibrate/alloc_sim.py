#!/usr/bin/env python3
"""A small model of PyTorch's CUDA caching allocator (default settings: 512-byte rounding, the 1 MiB small pool in
2 MiB segments, 20 MiB segments below 10 MiB, 2 MiB rounding above, best fit by size, splits above 1 MiB / 512 B
left over, neighbours merged on free) run over one event stream, to tell whether a reserved-memory miss lies in the
event sequence or in segment placement. It prints the peak reserved and, whenever a segment of 1 GiB or more is
opened while another exists, what occupies the existing ones.
Equal-size free blocks are taken from the oldest segment first (within a segment, the lower offset) (a driver that places segments bottom-up) or, with
--newer-first, from the newest (the engine's top-down address model, engine/alloc/device_va.h), or, with
--recorded-addresses (a recording only), at the lowest address the run's own segments had (matched by creation
order, so meaningful while the replay opens the same segments): where a stream replays to
the measured peak this way and not with --newer-first, the miss is in where cudaMalloc put the segments.
Usage: calibrate/alloc_sim.py STREAM [--newer-first | --recorded-addresses]
STREAM: a whole-run recording (record_case_events.py, .json.gz) or `memplan validate --only ID --events-out` text."""
import argparse
import gzip
import json

MB = 1 << 20


def round_size(s):
    return 512 if s < 512 else (s + 511) // 512 * 512


def segment_size(s):
    if s <= MB:
        return 2 * MB
    if s < 10 * MB:
        return 20 * MB
    return (s + 2 * MB - 1) // (2 * MB) * (2 * MB)


class Block:
    __slots__ = ("seg", "off", "size", "free", "prev", "next", "tag")

    def __init__(self, seg, off, size):
        self.seg, self.off, self.size = seg, off, size
        self.free, self.prev, self.next, self.tag = True, None, None, ""


class Allocator:
    def __init__(self, newer_first, seg_addresses=None):
        self.free_blocks = {True: [], False: []}  # small pool?
        self.segments = []  # (first block, bytes, small)
        self.reserved = self.peak = 0
        self.live = {}
        self.newer_first = newer_first
        self.seg_addresses = seg_addresses  # the recorded segments' addresses, in creation order

    def _best(self, small, size):
        best = None
        for b in self.free_blocks[small]:
            if b.size < size:
                continue
            if self.seg_addresses is not None and b.seg < len(self.seg_addresses):
                key = (b.size, self.seg_addresses[b.seg] + b.off, 0)
            else:
                key = (b.size, -b.seg if self.newer_first else b.seg, b.off)  # then the lower address
            if best is None or key < best[0]:
                best = (key, b)
        return best[1] if best else None

    def alloc(self, key, size, tag):
        size = round_size(size)
        small = size <= MB
        b = self._best(small, size)
        if b is None:
            ss = segment_size(size)
            b = Block(len(self.segments), 0, ss)
            self.segments.append((b, ss, small))
            self.reserved += ss
            self.peak = max(self.peak, self.reserved)
            self.free_blocks[small].append(b)
            if not small and ss >= 1024 * MB and len(self.segments) > 1:
                self.report(size, tag)
        self.free_blocks[small].remove(b)
        rest = b.size - size
        if (small and rest >= 512) or (not small and rest > MB):
            n = Block(b.seg, b.off + size, rest)
            n.prev, n.next = b, b.next
            if b.next:
                b.next.prev = n
            b.next, b.size = n, size
            self.free_blocks[small].append(n)
        b.free, b.tag = False, tag
        self.live[key] = (b, small)

    def free(self, key):
        b, small = self.live.pop(key)
        b.free = True
        if b.next and b.next.free:
            self.free_blocks[small].remove(b.next)
            self._absorb(b, b.next)
        if b.prev and b.prev.free:
            p = b.prev
            self.free_blocks[small].remove(p)
            self._absorb(p, b)
            b = p
        self.free_blocks[small].append(b)

    @staticmethod
    def _absorb(lower, upper):
        """Merges block `upper` into its lower neighbour `lower` (both free, neither on a free list)."""
        lower.size += upper.size
        lower.next = upper.next
        if upper.next:
            upper.next.prev = lower

    def report(self, size, tag):
        print("a new segment for %.1f MiB at %s; the segments of 1 GiB or more:" % (size / MB, tag))
        for first, ss, small in self.segments:
            if small or ss < 1024 * MB:
                continue
            parts, b = [], first
            while b:
                parts.append(("F%.1f" % (b.size / MB)) if b.free else ("L%.1f[%s]" % (b.size / MB, b.tag)))
                b = b.next
            print("   %d MiB: %s" % (ss // MB, " ".join(parts[:20])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stream")
    ap.add_argument("--newer-first", action="store_true")
    ap.add_argument("--recorded-addresses", action="store_true")
    a = ap.parse_args()
    if a.recorded_addresses and not a.stream.endswith(".gz"):
        ap.error("--recorded-addresses needs a recording (.json.gz)")
    events = json.load(gzip.open(a.stream, "rt"))["events"] if a.stream.endswith(".gz") else None
    seg_addresses = [e[2] for e in events if e[0] == "segment_alloc"] if a.recorded_addresses else None
    al = Allocator(a.newer_first, seg_addresses)
    if events is not None:
        for i, (act, size, addr, _stream, *_frames) in enumerate(events):
            if act == "alloc":
                al.alloc(addr, size, "recorded#%d" % i)
            elif act == "free_completed":
                al.free(addr)
    else:
        for i, line in enumerate(open(a.stream)):
            p = line.split()
            if p[0] == "a":
                al.alloc(p[2], int(p[1]), "replayed#%d" % i)
            else:
                al.free(p[2])
    print("peak reserved %d MiB, %d segments" % (al.peak // MB, len(al.segments)))


if __name__ == "__main__":
    main()
