#!/usr/bin/env python3
"""Family sets 19 (tuning) and 20 (held out), sixteenth session (2026-12-03): each helper's cases in
families19/<name>.py (tuning(): measured with whole-run recordings before the builders were checked against them;
holdout(): measured only after the merge, predicted first). Model types gemma4_text, qwen3_next, qwen3_5_text,
qwen3_5_moe_text, mistral4, ministral3, minimax_m2, lfm2_moe; inference of encoders (bert family, task feature) and
vision models (torchvision, transformers' image classifiers).
Usage: python3 make_families19.py [tuning|holdout|final] > families19-input.jsonl (default tuning)
final: the held-out rows and the tuning rows that data/validation/h200-families19-measured.jsonl lacks (the first
call failed three mistral4 rows and did not start seven): families20-input.jsonl, the final call's input."""
import importlib.util
import json
import os
import sys

NAMES = ["gemma4", "qwen35", "mistral4", "minimax", "encinf", "visinf"]


def load(name):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "families19", name + ".py")
    spec = importlib.util.spec_from_file_location("families19_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    spec.loader.exec_module(mod)
    return mod


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "tuning"
    if which == "final":
        here = os.path.dirname(os.path.abspath(__file__))
        measured_path = os.path.join(here, "..", "..", "data", "validation", "h200-families19-measured.jsonl")
        measured = {json.loads(l)["id"] for l in open(measured_path) if l.strip()}
        for n in NAMES:
            for c in load(n).holdout() + [c for c in load(n).tuning() if c["id"] not in measured]:
                print(json.dumps(c))
        return
    for n in NAMES:
        for c in getattr(load(n), which)():
            print(json.dumps(c))


if __name__ == "__main__":
    main()
