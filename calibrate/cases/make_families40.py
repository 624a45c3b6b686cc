#!/usr/bin/env python3
"""Family set 40 (InternVL, internvl: InternVLForConditionalGeneration), written from the 5.17 modeling file without a
device: writes calibrate/cases/families40-input.jsonl. Widths follow OpenGVLab/InternVL3-1B-hf and InternVL3-2B-hf
(InternViT-300M tower: 1024 x 24 layers, 448-pixel tiles of 14-pixel patches, q / k / v biases, layer scale; pixel
shuffle 0.5; LayerNorm + 4096 -> H -> H GELU projector; Qwen2.5-0.5B / 1.5B-shape text, vocabulary 151674, untied)
with the tower cut to 6 to 24 layers and the decoder to 4 to 28, so each row fits well under 50 GiB. Each image is
case key `image_tiles` T tiles (the processor's crop_to_patches count; absent: 1), 256 tokens a tile; seq_len
leaves the harness's layout room: 4 text tokens, then each image's T * 256 tokens and 3 more
(calibrate/harness_kinds/llava.py, derived in tests/families/test_family_set40_internvl.cpp). Caps: two copies of
the first row under memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the
predictions, then frozen).
Usage: python3 calibrate/cases/make_families40.py > calibrate/cases/families40-input.jsonl"""
import json

CAP_LO, CAP_HI = 10.8, 12.6  # the uncapped f40-ivl1b-bf16-b1s1300-t5-l8 row predicted 11289.0 MiB allocated, 12534 reserved (this commit)

VISION = {"model_type": "internvl_vision", "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16,
          "num_hidden_layers": 24, "attention_bias": True, "use_qk_norm": False, "hidden_act": "gelu",
          "norm_type": "layer_norm", "layer_norm_eps": 1e-06, "layer_scale_init_value": 0.1,
          "image_size": [448, 448], "patch_size": [14, 14], "num_channels": 3, "use_mask_token": False,
          "use_absolute_position_embeddings": True, "use_mean_pooling": True, "attention_dropout": 0.0,
          "hidden_dropout_prob": 0.0, "projection_dropout": 0.0}
QWEN_1B = {"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
           "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151674, "hidden_act": "silu",
           "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
           "use_sliding_window": False, "sliding_window": None, "attention_dropout": 0.0,
           "bos_token_id": 151643, "eos_token_id": 151645}
QWEN_2B = dict(QWEN_1B, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12)


def config(text, text_layers, vision_layers):
    return {"vision_config": dict(VISION, num_hidden_layers=vision_layers),
            "text_config": dict(text, num_hidden_layers=text_layers),
            "image_token_id": 151667, "image_seq_length": 256, "downsample_ratio": 0.5,
            "projector_hidden_act": "gelu", "vision_feature_layer": -1,
            "vision_feature_select_strategy": "default", "tie_word_embeddings": False}


def row(id_, text, tl, vl, mode, b, seq, prec, images=1, tiles=None, ckpt=False, lora=None, gen=0, cap=None,
        attn="sdpa"):
    r = {"id": id_, "model": {"source": "huggingface", "model_type": "internvl", "config": config(text, tl, vl),
                              "attn_implementation": attn},
         "mode": mode, "batch_size": b, "seq_len": seq, "precision": prec}
    if mode == "training":
        r.update({"optimizer": "adamw", "optimizer_impl": "foreach", "grad_checkpointing": ckpt,
                  "grad_accum_steps": 1, "images_per_sample": images})
        if tiles is not None:
            r["image_tiles"] = tiles
    else:
        r["generate_tokens"] = gen
    if lora is not None:
        r["lora"] = lora
    r["holdout"] = True
    if cap is not None:
        r["memory_cap_gib"] = cap
    return r


LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}
FIRST = ("f40-ivl1b-bf16-b1s1300-t5-l8", QWEN_1B, 8, 24, "training", 1, 1300, "bf16")
rows = [
    row(*FIRST, tiles=5),
    row("f40-ivl1b-ampbf16-b2s600-t2-v12-l6", QWEN_1B, 6, 12, "training", 2, 600, "amp_bf16", tiles=2),
    row("f40-ivl2b-bf16-eager-b3s900-t3-v8-l4", QWEN_2B, 4, 8, "training", 3, 900, "bf16", tiles=3, attn="eager"),
    row("f40-ivl1b-fp32-b1s800-t3-v6-l4", QWEN_1B, 4, 6, "training", 1, 800, "fp32", tiles=3),
    row("f40-ivl2b-bf16-ckpt-b2s1800-t7-v12-l8", QWEN_2B, 8, 12, "training", 2, 1800, "bf16", tiles=7, ckpt=True),
    row("f40-ivl1b-bf16-lora-b2s1300-t5", QWEN_1B, 24, 24, "training", 2, 1300, "bf16", tiles=5, lora=LORA),
    row("f40-ivl1b-ampbf16-b1s1100-2img-t2-v8-l6", QWEN_1B, 6, 8, "training", 1, 1100, "amp_bf16", images=2,
        tiles=2),
    row("f40-ivl1b-ampbf16-b5s300-t1", QWEN_1B, 24, 24, "training", 5, 300, "amp_bf16"),
    row("f40-ivl2b-bf16-text-b2s2048", QWEN_2B, 28, 24, "training", 2, 2048, "bf16", images=0),
    row("f40-ivl1b-infer-bf16-b2s1024-g16", QWEN_1B, 24, 24, "inference", 2, 1024, "bf16", gen=16),
]
if CAP_LO is not None:
    rows += [
        row(FIRST[0] + "-cap-lo", *FIRST[1:], tiles=5, cap=CAP_LO),
        row(FIRST[0] + "-cap-hi", *FIRST[1:], tiles=5, cap=CAP_HI),
    ]
for r in rows:
    print(json.dumps(r))
