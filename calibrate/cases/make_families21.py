#!/usr/bin/env python3
"""Family sets 21 (tuning) and 22 (held out), seventeenth session (2026-12-04): each helper's cases in
families21/<name>.py (tuning(): measured with whole-run recordings before the builders were checked against them;
holdout(): measured only after the merge, predicted first). Model types qwen2_vl, qwen2_5_vl, qwen3_vl,
qwen3_vl_moe (VLMs trained with images), clip, siglip, siglip2 (contrastive), wav2vec2, hubert, wavlm (speech
encoders), mamba, mamba2 and the Mamba hybrids, glm, helium, hunyuan_v1_moe, dots1, jetmoe, dbrx.
Usage: python3 make_families21.py [tuning|holdout|final] > families21-input.jsonl (default tuning)
final: the held-out rows and the tuning rows that data/validation/h200-families21-measured.jsonl lacks."""

import sys

from case_helpers import family_set_main, load_case_module

NAMES = ["qwen2vl", "qwen3vl", "clip", "audio", "mamba", "dec"]


def load(name):
    return load_case_module("families21", name)


if __name__ == "__main__":
    family_set_main("families21", NAMES, "h200-families21-measured.jsonl", sys.argv)
