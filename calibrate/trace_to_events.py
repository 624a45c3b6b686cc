#!/usr/bin/env python3
"""Convert a recorded allocator trace (data/validation/traces/*.json.gz) into a compact text fixture that the
C++ allocator tests read (tests/data/alloc/*.txt). Python 3 standard library only.

Usage: trace_to_events.py TRACE.json.gz OUT.txt

The trace holds every caching-allocator event of one steady-state training step plus `segments_at_end`.
What the fixture keeps (one record per line, first token names it; addresses are offsets from `base`):

  trace <id>
  base <address>                              lowest segment address; every offset below is relative to it
  seg <offset> <size> <S|L> <stream>          a segment held during the step
  live <block> <offset> <block_size> <requested>
                                              a block live when the step starts, inside the preceding seg
  a <block> <requested> <stream> <offset>     alloc (block ids are dense, in order of first appearance)
  f <block>                                   free_completed (free_requested is when Python let go; the
                                              allocator reuses the memory only at free_completed)
  s <bytes>                                   snapshot: bytes active (allocated + pending free) at this point
  segalloc <size> / segfree <size>            cudaMalloc / cudaFree recorded during the step
  endseg <offset> <total> <allocated> <S|L> <a|i><size>...   segments_at_end, blocks in address order

Starting state. The step starts from a warm allocator whose layout the trace does not record. When the step
records no segment_alloc / segment_free, the segments at the start are exactly `segments_at_end`. The blocks
live at the start are (a) those freed during the step but not allocated in it (address and requested size
known) and (b) active blocks at the end that the step never touched (size known from segments_at_end).
For (a) the block size is the 512 B-rounded request plus an unsplit tail when the gap to the next live block
(or the segment end) is at most 1 MiB in a large segment: every block of the large pool, free or not, is
larger than 1 MiB, so such a gap cannot be a free block. The small pool always splits, so it has no tails.
"""
import gzip
import json
import sys

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20


def round512(n):
    return MIN_BLOCK if n < MIN_BLOCK else (n + MIN_BLOCK - 1) // MIN_BLOCK * MIN_BLOCK


def convert(trace):
    segs = sorted(trace["segments_at_end"], key=lambda s: s["address"])
    base = segs[0]["address"]
    streams = {}

    def stream_id(raw):
        return streams.setdefault(raw, len(streams))

    out = []
    ids = {}          # address -> block id of the live block there
    next_id = 0
    start_live = {}   # address -> (block id, requested) for blocks live before the step
    allocated_in_step = set()
    n_seg_events = 0
    for action, size, addr, stream, _frames in trace["events"]:
        if action == "alloc":
            ids[addr] = next_id
            allocated_in_step.add(addr)
            out.append(f"a {next_id} {size} {stream_id(stream)} {addr - base}")
            next_id += 1
        elif action == "free_completed":
            if addr not in ids:
                ids[addr] = next_id
                start_live[addr] = (next_id, size)
                next_id += 1
            out.append(f"f {ids.pop(addr)}")
        elif action == "snapshot":
            out.append(f"s {size}")
        elif action in ("segment_alloc", "segment_free"):
            n_seg_events += 1
            out.append(f"{action.replace('_', '')} {size}")
        elif action != "free_requested":
            raise ValueError(f"unknown action {action}")

    # Blocks active at the end: those the step left live must match; the rest were live all along.
    end_active = {}
    for s in segs:
        a = s["address"]
        for size, state in s["blocks"]:
            if state.startswith("active"):
                end_active[a] = size
            a += size
    for addr in ids:
        if addr not in end_active:
            raise ValueError(f"block at {addr:#x} live at the end of the replay but not active in segments_at_end")
    untouched = {a: sz for a, sz in end_active.items() if a not in ids and a not in allocated_in_step}
    for a in untouched:
        start_live[a] = (next_id, None)
        next_id += 1

    header = [f"trace {trace['id']}", f"base {base}"]
    if n_seg_events:
        header.append(f"# the step records {n_seg_events} segment events: the start layout below is approximate")
    live_addrs = sorted(start_live)
    for s in segs:
        lo, hi = s["address"], s["address"] + s["total_size"]
        small = s["segment_type"] == "small"
        header.append(f"seg {lo - base} {s['total_size']} {'S' if small else 'L'} 0")
        inside = [a for a in live_addrs if lo <= a < hi]
        for i, a in enumerate(inside):
            block, requested = start_live[a]
            if requested is None:
                size = untouched[a]
                requested = size
            else:
                size = round512(requested)
                nxt = inside[i + 1] if i + 1 < len(inside) else hi
                gap = nxt - (a + size)
                if gap < 0:
                    raise ValueError(f"live blocks overlap at {a:#x}")
                if not small and 0 < gap <= SMALL_SIZE:
                    size += gap
            header.append(f"live {block} {a - base} {size} {requested}")
    footer = []
    for s in segs:
        blocks = " ".join(("a" if st.startswith("active") else "i") + str(sz) for sz, st in s["blocks"])
        footer.append(f"endseg {s['address'] - base} {s['total_size']} {s['allocated_size']} "
                      f"{'S' if s['segment_type'] == 'small' else 'L'} {blocks}")
    return header + out + footer


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with gzip.open(sys.argv[1], "rt") as f:
        trace = json.load(f)
    lines = convert(trace)
    with open(sys.argv[2], "w") as f:
        f.write(f"# memplan allocator fixture from {sys.argv[1].split('/')[-1]} by calibrate/trace_to_events.py\n")
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
