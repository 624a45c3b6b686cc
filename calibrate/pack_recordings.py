#!/usr/bin/env python3
"""Packs a record_cases.sh output folder into at most N tar files of at most LIMIT MiB each (the device tool brings
back 8 files of 16 MiB): measured.jsonl, env.json and log always go in the first; recordings follow, smallest
first, and those that do not fit are listed in skipped.txt in the first tar.
Usage: python3 calibrate/pack_recordings.py DIR OUT_PREFIX [N] [LIMIT_MIB]"""
import os
import sys
import tarfile


def main():
    d, prefix = sys.argv[1:3]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    limit = float(sys.argv[4] if len(sys.argv) > 4 else 15) * (1 << 20)
    recs = sorted((os.path.getsize(os.path.join(d, f)), f) for f in os.listdir(d) if f.endswith(".json.gz"))
    bins = [[] for _ in range(n)]
    sizes = [sum(os.path.getsize(os.path.join(d, f)) for f in ("measured.jsonl", "env.json", "log")
                 if os.path.exists(os.path.join(d, f)))] + [0] * (n - 1)
    skipped = []
    for sz, f in recs:
        i = min(range(n), key=lambda k: sizes[k])
        if sizes[i] + sz > limit:
            skipped.append(f)
            continue
        bins[i].append(f)
        sizes[i] += sz
    with open(os.path.join(d, "skipped.txt"), "w") as fh:
        fh.write("\n".join(skipped) + "\n")
    for i, files in enumerate(bins):
        if i > 0 and not files:
            continue
        with tarfile.open("%s%d.tar" % (prefix, i), "w") as t:
            if i == 0:
                for f in ("measured.jsonl", "env.json", "log", "skipped.txt"):
                    if os.path.exists(os.path.join(d, f)):
                        t.add(os.path.join(d, f), arcname=f)
            for f in files:
                t.add(os.path.join(d, f), arcname=f)
    print("packed", sum(len(b) for b in bins), "recordings; skipped", len(skipped))


if __name__ == "__main__":
    main()
