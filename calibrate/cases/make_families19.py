#!/usr/bin/env python3
"""Family sets 19 (tuning) and 20 (held out), sixteenth session (2026-12-03): each helper's cases in
families19/<name>.py (tuning(): measured with whole-run recordings before the builders were checked against them;
holdout(): measured only after the merge, predicted first). Model types gemma4_text, qwen3_next, qwen3_5_text,
qwen3_5_moe_text, mistral4, ministral3, minimax_m2, lfm2_moe; inference of encoders (bert family, task feature) and
vision models (torchvision, transformers' image classifiers).
Usage: python3 make_families19.py [tuning|holdout|final] > families19-input.jsonl (default tuning)
final: the held-out rows and the tuning rows that data/validation/h200-families19-measured.jsonl lacks (the first
call failed three mistral4 rows and did not start seven): families20-input.jsonl, the final call's input."""

import sys

from case_helpers import family_set_main, load_case_module

NAMES = ["gemma4", "qwen35", "mistral4", "minimax", "encinf", "visinf"]


def load(name):
    return load_case_module("families19", name)


if __name__ == "__main__":
    family_set_main("families19", NAMES, "h200-families19-measured.jsonl", sys.argv)
