#!/usr/bin/env python3
"""Family sets 23 (tuning) and 24 (held out), eighteenth session (2026-12-04): each helper's cases in
families23/<name>.py (tuning(): measured with whole-run recordings before the builders were checked against them;
holdout(): measured only after the merge, predicted first). Model types granitemoehybrid, bamba,
falcon_h1, nemotron_h, jamba (Mamba hybrids), llava, paligemma, idefics3, smolvlm (VLMs trained with images),
convnext, convnextv2, swin (Hugging Face image classifiers) and what the helpers reached of their stretch types.
Usage: python3 make_families23.py [tuning|holdout|final] > families23-input.jsonl (default tuning)
final: the held-out rows and the tuning rows that data/validation/h200-families23-measured.jsonl lacks."""

import sys

from case_helpers import family_set_main, load_case_module

NAMES = ["hyb", "hyb2", "jamba", "llava", "idefics", "hfvis", "vlminf"]


def load(name):
    return load_case_module("families23", name)


if __name__ == "__main__":
    family_set_main("families23", NAMES, "h200-families23-measured.jsonl", sys.argv)
