"""Which device VA placement policy explains the recorded runs (twenty-third session, data/validation/NOTES.md "Segment
placement"): every whole-run recording (data/validation/recordings/*/, one stream, no segment frees) is replayed through
calibrate/alloc_sim.py's caching-allocator model with equal-size ties going to the lower address, the segments' addresses
coming from a policy: `recorded` (the run's own addresses: the sim's own fidelity), `topdown32` (engine/alloc/device_va.h:
the lowest hole that fits, else below everything with the start aligned down to 32 MiB), its variants, and `older` /
`newer` (ties to the older / newer segment). Prints per policy how many recordings' peak reserved it reproduces.
Usage: python3 calibrate/va_policy_eval.py [POLICY ...]   (stdlib only; ~2.5 min per policy on this machine)"""
import glob
import gzip
import json
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alloc_sim as A
MB = 1 << 20

class TopDown:
    """engine/alloc/device_va.h: lowest hole that fits, else below everything, start aligned down to ALIGN."""
    def __init__(self, align=32 * MB, hole_order='low'):
        self.lowest = 1 << 50; self.holes = {}; self.align = align; self.hole_order = hole_order
    def place(self, n):
        keys = sorted(self.holes, reverse=(self.hole_order == 'high'))
        for a in keys:
            s = self.holes[a]
            if s >= n:
                del self.holes[a]
                if self.hole_order == 'high':  # take the top of the hole
                    if s > n: self.holes[a] = s - n
                    return a + s - n
                if s > n: self.holes[a + n] = s - n
                return a
        addr = (self.lowest - n) // self.align * self.align
        if addr + n < self.lowest: self.add(addr + n, self.lowest - addr - n)
        self.lowest = addr
        return addr
    def add(self, a, n):
        # coalesce
        for b in list(self.holes):
            if b + self.holes[b] == a: n += self.holes.pop(b); a = b; break
        if a + n in self.holes: n += self.holes.pop(a + n)
        self.holes[a] = n
    def release(self, a, n): self.add(a, n)

class Recorded:
    def __init__(self, bases): self.bases = list(bases); self.i = 0
    def place(self, n):
        a = self.bases[self.i] if self.i < len(self.bases) else (1 << 60) + self.i * (1 << 40)
        self.i += 1; return a
    def release(self, a, n): pass

class Sim(A.Allocator):
    def __init__(self, va):
        super().__init__(False); self.va = va; self.addr = []
    def report(self, size, tag):  # alloc_sim's trace of large segments: not wanted here
        pass
    def _best(self, small, size):
        best = None
        for b in self.free_blocks[small]:
            if b.size < size: continue
            key = (b.size, self.addr[b.seg] + b.off)
            if best is None or key < best[0]: best = (key, b)
        return best[1] if best else None
    def alloc(self, key, size, tag):
        n0 = len(self.segments)
        super().alloc(key, size, tag)
        if len(self.segments) > n0:
            self.addr.append(self.va.place(self.segments[-1][1]))

def run(path, va_factory):
    d = json.load(gzip.open(path))
    ev = d['events']
    if not ev or any(e[0] == 'segment_free' for e in ev) or len(set(e[3] for e in ev if len(e) > 3)) > 1:
        return None  # empty_cache / OOM retries or several streams: not this sim's business
    va = va_factory(d)
    s = Sim(va)
    for e in ev:
        act, size, addr = e[0], e[1], e[2]
        if act == 'alloc': s.alloc(addr, size, '')
        elif act == 'free_completed': s.free(addr)
    return s.peak / MB, d.get('peak_reserved_mib')

if __name__ == '__main__':
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data', 'validation', 'recordings')
    files = sorted(glob.glob(os.path.join(root, '*', '*.json.gz')))
    policies = {
        'recorded': lambda d: Recorded([e[2] for e in d['events'] if e[0] == 'segment_alloc']),
        'topdown32': lambda d: TopDown(32 * MB),
        'topdown2': lambda d: TopDown(2 * MB),
        'topdown32high': lambda d: TopDown(32 * MB, 'high'),
        'topdown64': lambda d: TopDown(64 * MB),
        'topdown128': lambda d: TopDown(128 * MB),
        'older': lambda d: Recorded([i * (1 << 40) for i in range(100000)]),
        'newer': lambda d: Recorded([(1 << 60) - i * (1 << 40) for i in range(100000)]),
    }
    which = sys.argv[1:] or list(policies)
    res = {}
    for f in files:
        row = {}
        for p in which:
            r = run(f, policies[p])
            if r is None: break
            row[p] = r
        if row: res[os.path.basename(f)] = row
    for p in which:
        exact = sum(1 for r in res.values() if abs(r[p][0] - r[p][1]) < 0.5)
        errs = sorted(abs(r[p][0] / r[p][1] - 1) for r in res.values())
        print('%-10s %d recordings, exact %d, within 1%% %d, worst %.1f%%' % (p, len(res), exact, sum(e < 0.01 for e in errs), 100 * errs[-1]))
    if os.environ.get('VA_OUT'):
        json.dump(res, open(os.environ['VA_OUT'], 'w'))
