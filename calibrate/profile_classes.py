#!/usr/bin/env python3
"""GPU time per kernel class of every profiled training step, as one table for the step-time fit (issue 17 part 3).

    python3 calibrate/profile_classes.py > data/calibration/h200-profile-classes.tsv

Reads the committed step profiles (calibrate/step_profile.py's output, data/calibration/raw/h200-step-profiles*.json.gz)
and sums each case's kernels by profile_compare.kernel_class (matmul, conv, bn, attn, pool, optimizer,
elementwise): milliseconds of kernel time in one profiled step; and the step's unprofiled wall time and the GPU's
idle milliseconds in it (wall - gpu busy). memplan calibrate --fit-time reads the table: a
tuning case's class totals anchor the rate coefficients of its columns (cli/time_fit.cpp), where the step times
alone let a too-slow GEMM rate and a too-fast elementwise rate cancel. Held-out cases' rows are written too; the
fit skips them. stdlib only.
"""
import glob
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_compare  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def main():
    paths = sorted(glob.glob(os.path.join(ROOT, "data/calibration/raw/h200-step-profiles*.json.gz")))
    print("# memplan profile classes: per profiled training step (calibrate/step_profile.py), GPU kernel time by class")
    print("# written by calibrate/profile_classes.py from " + " ".join(os.path.basename(p) for p in paths))
    print("# profile case_id class kernel_ms")
    seen = set()
    for path in paths:
        for c in json.load(gzip.open(path))["cases"]:
            if "kernels" not in c or c["id"] in seen:
                continue
            seen.add(c["id"])
            ms = {k: 0.0 for k in profile_compare.CLASSES}
            for name, _count, us in c["kernels"]:
                cls = profile_compare.kernel_class(name)
                if cls is not None:
                    ms[cls] += us / 1e3
            for k in profile_compare.CLASSES:
                print("profile %s %s %.4f" % (c["id"], k, ms[k]))
            # the step's wall time (unprofiled) and the GPU's idle time within it (wall less the union of the
            # profiled step's kernel intervals): between kernels where the step is GPU-bound
            print("profile %s wall %.4f" % (c["id"], c["wall_ms"]))
            print("profile %s idle %.4f" % (c["id"], max(0.0, c["wall_ms"] - c["gpu_busy_us"] / 1e3)))


if __name__ == "__main__":
    main()
