#!/usr/bin/env python3
"""Family set 21, Qwen3-VL (qwen3_vl, qwen3_vl_moe) as <Type>ForConditionalGeneration: training steps with images
(harness plugin calibrate/harness_kinds/qwen3vl.py: input_ids with vision_start, image tokens, vision_end runs,
pixel_values, image_grid_thw, mm_token_type_ids; labels = input_ids), text-only training, and text-prompt inference
with generate. Published widths of Qwen3-VL-2B / 4B / 8B and 30B-A3B with few text layers (and fewer vision blocks
where the tower is big). tuning(): measured before the builder is written (ids f21-q3vl*); holdout(): other shapes
and settings, predicted at the final commit and measured blind (ids f22-q3vl*).
Usage: python3 qwen3vl.py   (JSONL: tuning, then holdout)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

ROPE = {"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [24, 20, 20], "mrope_interleaved": True}


def text(hidden, inter, heads, kv, layers, **kw):
    t = {"vocab_size": 151936, "hidden_size": hidden, "intermediate_size": inter, "num_attention_heads": heads,
         "num_key_value_heads": kv, "head_dim": 128, "num_hidden_layers": layers, "hidden_act": "silu",
         "rms_norm_eps": 1e-6, "max_position_embeddings": 262144, "rope_parameters": dict(ROPE)}
    t.update(kw)
    return t


def vision(hidden, inter, depth, out, deepstack):
    return {"depth": depth, "hidden_size": hidden, "intermediate_size": inter, "num_heads": 16, "in_channels": 3,
            "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": out,
            "num_position_embeddings": 2304, "hidden_act": "gelu_pytorch_tanh", "deepstack_visual_indexes": deepstack}


def vl(text_cfg, vision_cfg, tie):
    return {"text_config": text_cfg, "vision_config": vision_cfg, "tie_word_embeddings": tie}


# Qwen3-VL-2B / 4B / 8B widths (text layers and vision depth cut as named in each id)
def q2b(layers, depth=24, deepstack=(5, 11, 17)):
    return vl(text(2048, 6144, 16, 8, layers), vision(1024, 4096, depth, 2048, list(deepstack)), True)


def q4b(layers, depth=24, deepstack=(5, 11, 17)):
    return vl(text(2560, 9728, 32, 8, layers), vision(1024, 4096, depth, 2560, list(deepstack)), True)


def q8b(layers, depth=27, deepstack=(8, 16, 24)):
    return vl(text(4096, 12288, 32, 8, layers), vision(1152, 4304, depth, 4096, list(deepstack)), False)


# Qwen3-VL-30B-A3B widths (MoE text: 128 experts, 8 per token)
def q30b(layers, depth, deepstack):
    t = text(2048, 6144, 32, 4, layers, moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8,
             decoder_sparse_step=1, mlp_only_layers=[])
    return vl(t, vision(1152, 4304, depth, 2048, list(deepstack)), False)


def train(id, mt, cfg, b, s, prec, grid=None, images=0, attn="sdpa", ckpt=False, accum=1, opt="adamw",
          impl="foreach", est=None):
    c = training(id, hf(mt, cfg, attn), b, s, prec, opt, impl, ckpt, accum)
    if images:
        c["image_grid"] = list(grid)
        c["images_per_sample"] = images
    c["_est_gib"] = est
    return c


def gen(id, mt, cfg, b, s, prec, n, attn="sdpa", est=None):
    c = inference(id, hf(mt, cfg, attn), b, s, prec, n)
    c["_est_gib"] = est
    return c


def tuning():
    return [
        train("f21-q3vl-2b-l4-img-bf16-b2s1000", "qwen3_vl", q2b(4), 2, 1000, "bf16", [1, 32, 32], 1, est=12),
        train("f21-q3vl-2b-l4-img2-ampbf16-eager-ckpt-b3s700", "qwen3_vl", q2b(4), 3, 700, "amp_bf16",
              [1, 20, 28], 2, attn="eager", ckpt=True, impl="fused", est=18),
        train("f21-q3vl-8b-l2-v9-img2-ampfp16-acc2-b1s1500", "qwen3_vl", q8b(2, 9, (2, 4, 6)), 1, 1500, "amp_fp16",
              [1, 46, 34], 2, accum=2, est=36),
        train("f21-q3vl-4b-l3-text-fp32-b5s500", "qwen3_vl", q4b(3), 5, 500, "fp32", est=24),
        gen("f21-q3vl-2b-l4-gen-bf16-b3s1000-g16", "qwen3_vl", q2b(4), 3, 1000, "bf16", 16, est=4),
        train("f21-q3vlm-30b-l2-v6-img-bf16-b2s800", "qwen3_vl_moe", q30b(2, 6, (1, 3, 5)), 2, 800, "bf16",
              [1, 24, 24], 1, est=22),
    ]


def holdout():
    return [
        train("f22-q3vl-4b-l3-v12-img-bf16-ckpt-b4s640", "qwen3_vl", q4b(3, 12, (2, 6, 10)), 4, 640, "bf16",
              [1, 24, 40], 1, ckpt=True, est=12),
        train("f22-q3vlm-30b-l2-v4-img2-ampbf16-eager-acc2-b1s1000", "qwen3_vl_moe", q30b(2, 4, (0, 1, 2)), 1, 1000,
              "amp_bf16", [1, 16, 22], 2, attn="eager", accum=2, est=40),
        gen("f22-q3vl-8b-l3-gen-ampbf16-b2s1500-g8", "qwen3_vl", q8b(3), 2, 1500, "amp_bf16", 8, est=14),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
