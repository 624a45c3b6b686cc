#!/usr/bin/env python3
"""Family sets 21 (tuning) and 22 (held out), seventeenth session (2026-12-04): each helper's cases in
families21/<name>.py (tuning(): measured with whole-run recordings before the builders were checked against them;
holdout(): measured only after the merge, predicted first). Model types qwen2_vl, qwen2_5_vl, qwen3_vl,
qwen3_vl_moe (VLMs trained with images), clip, siglip, siglip2 (contrastive), wav2vec2, hubert, wavlm (speech
encoders), mamba, mamba2 and the Mamba hybrids, glm, helium, hunyuan_v1_moe, dots1, jetmoe, dbrx.
Usage: python3 make_families21.py [tuning|holdout|final] > families21-input.jsonl (default tuning)
final: the held-out rows and the tuning rows that data/validation/h200-families21-measured.jsonl lacks."""
import importlib.util
import json
import os
import sys

NAMES = ["qwen2vl", "qwen3vl", "clip", "audio", "mamba", "dec"]


def load(name):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "families21", name + ".py")
    spec = importlib.util.spec_from_file_location("families21_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    spec.loader.exec_module(mod)
    return mod


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "tuning"
    if which == "final":
        here = os.path.dirname(os.path.abspath(__file__))
        measured_path = os.path.join(here, "..", "..", "data", "validation", "h200-families21-measured.jsonl")
        measured = {json.loads(l)["id"] for l in open(measured_path) if l.strip()}
        for n in NAMES:
            for c in load(n).holdout() + [c for c in load(n).tuning() if c["id"] not in measured]:
                print(json.dumps(c))
        return
    for n in NAMES:
        if not os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "families21", n + ".py")):
            print("make_families21: no families21/%s.py" % n, file=sys.stderr)
            continue
        for c in getattr(load(n), which)():
            print(json.dumps(c))


if __name__ == "__main__":
    main()
