#!/usr/bin/env python3
"""Family sets 23 (tuning) and 24 (held out), eighteenth session (2026-12-04): each helper's cases in
families23/<name>.py (tuning(): measured with whole-run recordings before the builders were checked against them;
holdout(): measured only after the merge, predicted first). Model types granitemoehybrid, bamba,
falcon_h1, nemotron_h, jamba (Mamba hybrids), llava, paligemma, idefics3, smolvlm (VLMs trained with images),
convnext, convnextv2, swin (Hugging Face image classifiers) and what the helpers reached of their stretch types.
Usage: python3 make_families23.py [tuning|holdout|final] > families23-input.jsonl (default tuning)
final: the held-out rows and the tuning rows that data/validation/h200-families23-measured.jsonl lacks."""
import importlib.util
import json
import os
import sys

NAMES = ["hyb", "hyb2", "jamba", "llava", "idefics", "hfvis", "vlminf"]


def load(name):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "families23", name + ".py")
    spec = importlib.util.spec_from_file_location("families23_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    spec.loader.exec_module(mod)
    return mod


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "tuning"
    if which == "final":
        here = os.path.dirname(os.path.abspath(__file__))
        measured_path = os.path.join(here, "..", "..", "data", "validation", "h200-families23-measured.jsonl")
        measured = {json.loads(l)["id"] for l in open(measured_path) if l.strip()}
        for n in NAMES:
            for c in load(n).holdout() + [c for c in load(n).tuning() if c["id"] not in measured]:
                print(json.dumps(c))
        return
    for n in NAMES:
        if not os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "families23", n + ".py")):
            print("make_families23: no families23/%s.py" % n, file=sys.stderr)
            continue
        for c in getattr(load(n), which)():
            print(json.dumps(c))


if __name__ == "__main__":
    main()
