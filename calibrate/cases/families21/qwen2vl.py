#!/usr/bin/env python3
"""Family set 21, qwen2vl: Qwen2-VL (qwen2_vl) and Qwen2.5-VL (qwen2_5_vl), <Type>ForConditionalGeneration built by
the harness plugin calibrate/harness_kinds/qwen2vl.py (kind vlm_qwen2). Training steps with images (`image_grid`
[t, h, w] patches per image, `images_per_sample` images in every sample, framed by vision start / end tokens as the
processor lays them out), text-only training, and text-only serving with generate.
Published widths with few text layers and few vision blocks (vision_config.depth):
  Qwen/Qwen2-VL-2B-Instruct    text hidden 1536, MLP 8960, 12 heads / 2 KV, vocabulary 151936, tied embeddings;
                               vision embed 1280, 16 heads, MLP ratio 4 (QuickGELU), LayerNorm, merger to 1536
  Qwen/Qwen2-VL-7B-Instruct    text hidden 3584, MLP 18944, 28 heads / 4 KV, vocabulary 152064; vision as 2B,
                               merger to 3584
  Qwen/Qwen2.5-VL-3B-Instruct  text hidden 2048, MLP 11008, 16 heads / 2 KV, vocabulary 151936, tied; vision hidden
                               1280, 16 heads, SwiGLU MLP 3420, RMSNorm, window 112 px, merger to 2048
  Qwen/Qwen2.5-VL-7B-Instruct  text as Qwen2-VL-7B; vision as 3B, merger to 3584
Patch 14, temporal patch 2, spatial merge 2: an image grid [1, h, w] is h*w patches and h*w/4 image tokens.
Tuning rows (f21-q2vl / q25vl-*) are measured with whole-run allocator recordings before the builder exists;
held-out rows (f22-*) are other shapes and settings, predicted at the final commit and measured blind.
Usage: python3 qwen2vl.py > qwen2vl.jsonl   (tuning rows, then held-out rows, one JSON object per line)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

Q2, Q25 = "qwen2_vl", "qwen2_5_vl"
V2 = {"embed_dim": 1280, "num_heads": 16, "mlp_ratio": 4, "hidden_act": "quick_gelu", "patch_size": 14,
      "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3}
V25 = {"hidden_size": 1280, "num_heads": 16, "intermediate_size": 3420, "hidden_act": "silu", "patch_size": 14,
       "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3, "window_size": 112}
T2B = {"hidden_size": 1536, "intermediate_size": 8960, "num_attention_heads": 12, "num_key_value_heads": 2,
       "vocab_size": 151936, "rms_norm_eps": 1e-6}
T7B = {"hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28, "num_key_value_heads": 4,
       "vocab_size": 152064, "rms_norm_eps": 1e-6}
T3B = {"hidden_size": 2048, "intermediate_size": 11008, "num_attention_heads": 16, "num_key_value_heads": 2,
       "vocab_size": 151936, "rms_norm_eps": 1e-6}


def q2(text, layers, depth, tied):
    """A Qwen2-VL config: `layers` text layers, `depth` vision blocks, the merger to the text width."""
    return {"text_config": dict(text, num_hidden_layers=layers),
            "vision_config": dict(V2, depth=depth, hidden_size=text["hidden_size"]),
            "tie_word_embeddings": tied}


def q25(text, layers, depth, full, tied):
    """A Qwen2.5-VL config: `full` lists the vision blocks with full attention (window attention elsewhere)."""
    return {"text_config": dict(text, num_hidden_layers=layers),
            "vision_config": dict(V25, depth=depth, out_hidden_size=text["hidden_size"], fullatt_block_indexes=full),
            "tie_word_embeddings": tied}


def img(grid, k):
    return {"image_grid": grid, "images_per_sample": k}


def tuning():
    return [
        training("f21-q2vl-2b-bf16-b2s1000-img34x50", hf(Q2, q2(T2B, 4, 4, True)), 2, 1000, "bf16", "adamw",
                 _est_gib=12, **img([1, 34, 50], 1)),
        training("f21-q2vl-7b-ampbf16-b1s1500-2img-ckpt", hf(Q2, q2(T7B, 2, 4, False)), 1, 1500, "amp_bf16",
                 "adamw", ckpt=True, _est_gib=34, **img([1, 28, 40], 2)),
        training("f21-q2vl-2b-fp32-eager-b1s600-img20x24", hf(Q2, q2(T2B, 2, 2, True), "eager"), 1, 600, "fp32",
                 "adamw", _est_gib=10, **img([1, 20, 24], 1)),
        training("f21-q25vl-3b-bf16-b2s1024-img36x52", hf(Q25, q25(T3B, 4, 4, [3], True)), 2, 1024, "bf16",
                 "adamw", _est_gib=13, **img([1, 36, 52], 1)),
        training("f21-q25vl-7b-ampfp16-b1s1200-2img-acc2", hf(Q25, q25(T7B, 2, 4, [1, 3], False)), 1, 1200,
                 "amp_fp16", "adamw", accum=2, _est_gib=34, **img([1, 32, 44], 2)),
        dict(inference("f21-q2vl-7b-infer-bf16-b3s1000-g32", hf(Q2, q2(T7B, 4, 2, False)), 3, 1000, "bf16", 32),
             _est_gib=7),
    ]


def holdout():
    return [
        training("f22-q2vl-7b-bf16-b2s1500-3img", hf(Q2, q2(T7B, 2, 3, False)), 2, 1500, "bf16", "adamw",
                 _est_gib=22, **img([1, 22, 30], 3)),
        training("f22-q25vl-3b-ampbf16-b3s1000-text", hf(Q25, q25(T3B, 4, 2, [1], True)), 3, 1000, "amp_bf16",
                 "adamw", _est_gib=18),
        training("f22-q25vl-3b-fp32-eager-b1s800-img40x40-ckpt", hf(Q25, q25(T3B, 2, 4, [1], True), "eager"), 1,
                 800, "fp32", "adamw", ckpt=True, _est_gib=12, **img([1, 40, 40], 1)),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
