#!/usr/bin/env python3
"""Summary of a step-time fit by set (issue 17 part 3): tuning rows, held out 1 (ids h-*), held out 2 (hv-, hl-,
hf-*), and of those the vision / transformer / LoRA parts; median and max |error|, rows within 10 % and 15 %.

    python3 calibrate/time_fit_summary.py [data/calibration/time-fit.json] [--compare OTHER.json] [--misses PCT]

--compare prints OTHER's rows next to the first's (a before / after table); --misses lists the rows outside PCT.
stdlib only.
"""
import json
import sys


def set_of(row):
    i = row["id"]
    if not row["holdout"]:
        return "tuning"
    return "held out 1" if i.startswith("h-") else "held out 2"


def part_of(row):
    i = row["id"]
    if i.split("-")[0] in ("l", "hl"):
        return "lora"
    if i.split("-")[0] in ("v", "hv") or any(k in i for k in ("resnet", "convnext", "efficientnet", "mobilenet", "vit",
                                                               "swin", "densenet", "vgg", "regnet", "resnext")):
        return "vision"
    return "transformer"


def median(v):
    v = sorted(v)
    n = len(v)
    return 0.0 if n == 0 else (v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2]))


def summary(rows):
    out = []
    for s in ("tuning", "held out 1", "held out 2"):
        for p in (None, "transformer", "vision", "lora"):
            e = [abs(r["error_pct"]) for r in rows if set_of(r) == s and (p is None or part_of(r) == p)]
            if not e:
                continue
            worst = max((r for r in rows if set_of(r) == s and (p is None or part_of(r) == p)),
                        key=lambda r: abs(r["error_pct"]))
            out.append((s + ("" if p is None else ", " + p), len(e), median(e), max(e), sum(x <= 10 for x in e),
                        sum(x <= 15 for x in e), worst["id"]))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    path = args[0] if args else "data/calibration/time-fit.json"
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    rows = json.load(open(path))["rows"]
    print("| set | rows | median | max | within 10 % | within 15 % | worst |")
    print("|---|---|---|---|---|---|---|")
    for s in summary(rows):
        print("| %s | %d | %.1f %% | %.1f %% | %d | %d | %s |" % s)
    if "compare" in opts:
        other = {(r["id"], r["what"]): r for r in json.load(open(opts["compare"]))["rows"]}
        print("\n| case | what | set | measured ms | before | after |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            o = other.get((r["id"], r["what"]))
            b = "%.1f (%+.1f %%)" % (o["predicted_ms"], o["error_pct"]) if o else "-"
            print("| %s | %s | %s | %.1f | %s | %.1f (%+.1f %%) |" % (r["id"], r["what"], set_of(r), r["measured_ms"], b,
                                                                   r["predicted_ms"], r["error_pct"]))
    if "misses" in opts:
        lim = float(opts["misses"])
        for r in rows:
            if abs(r["error_pct"]) > lim:
                print("miss %-46s %-12s %-10s %+7.2f %s" % (r["id"], r["what"], set_of(r), r["error_pct"],
                                                          "cpu" if r.get("cpu_bound") else ""))


if __name__ == "__main__":
    main()
