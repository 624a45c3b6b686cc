"""Family set 23, vlminf: Qwen2-VL (qwen2_vl), Qwen2.5-VL (qwen2_5_vl) and Qwen3-VL (qwen3_vl) served with images,
the harness plugins calibrate/harness_kinds/qwen2vl.py, qwen3vl.py: the prompt laid out as the training rows of
family set 21 lay it (`image_grid` [t, h, w] patches per image, `images_per_sample` images in every sample), given to
the prefill's forward and to generate() with pixel_values, image_grid_thw and mm_token_type_ids. Widths from
families21/qwen2vl.py, qwen3vl.py (published Qwen2-VL-2B / 7B, Qwen2.5-VL-3B / 7B, Qwen3-VL-2B / 4B), few text layers
and vision blocks where large. Tuning rows (f23-vi*) are recorded whole-run before the builders serve images;
held-out rows (f24-vi*) other shapes and settings, predicted first and measured blind.
Usage: python3 vlminf.py > vlminf.jsonl   (tuning rows, then held-out rows)"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from case_helpers import hf, inference  # noqa: E402



def _load(name):
    spec = importlib.util.spec_from_file_location("families21_" + name, os.path.join(HERE, "..", "families21",
                                                                                      name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


qv, q3 = _load("qwen2vl"), _load("qwen3vl")


def vinf(cid, model, b, s, prec, gen, grid, k, est):
    return dict(inference(cid, model, b, s, prec, gen), image_grid=grid, images_per_sample=k, _est_gib=est)


def tuning():
    return [
        vinf("f23-vi2-q2vl2b-infer-bf16-b2s1200-img32x48-g16", hf(qv.Q2, qv.q2(qv.T2B, 6, 6, True)), 2, 1200, "bf16",
             16, [1, 32, 48], 1, 8),
        vinf("f23-vi2-q25vl3b-infer-bf16-b3s1000-2img-g8", hf(qv.Q25, qv.q25(qv.T3B, 6, 6, [2, 5], True)), 3, 1000,
             "bf16", 8, [1, 28, 36], 2, 10),
        vinf("f23-vi2-q2vl7b-infer-bf16-b1s3000-img64x64-prefill", hf(qv.Q2, qv.q2(qv.T7B, 4, 4, False)), 1, 3000,
             "bf16", 0, [1, 64, 64], 1, 12),
        vinf("f23-vi2-q2vl2b-infer-fp32-eager-b2s700-img24x36-g4", hf(qv.Q2, qv.q2(qv.T2B, 4, 4, True), "eager"), 2,
             700, "fp32", 4, [1, 24, 36], 1, 12),
        vinf("f23-vi3-q3vl4b-infer-bf16-b2s1000-img32x40-g8", hf("qwen3_vl", q3.q4b(6, 8, (1, 3, 5))), 2, 1000, "bf16",
             8, [1, 32, 40], 1, 12),
    ]


def holdout():
    return [
        vinf("f24-vi2-q25vl7b-infer-bf16-b2s1500-img40x56-g24", hf(qv.Q25, qv.q25(qv.T7B, 4, 8, [3, 7], False)), 2,
             1500, "bf16", 24, [1, 40, 56], 1, 16),
        vinf("f24-vi2-q2vl2b-infer-bf16-eager-b3s900-2img-g12", hf(qv.Q2, qv.q2(qv.T2B, 8, 4, True), "eager"), 3,
             900, "bf16", 12, [1, 20, 28], 2, 8),
        vinf("f24-vi3-q3vl2b-infer-bf16-b3s800-2img-g16", hf("qwen3_vl", q3.q2b(6, 6, (1, 3))), 3, 800, "bf16", 16,
             [1, 24, 32], 2, 10),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
