#!/usr/bin/env python3
"""Family set 39 (LLaVA-NeXT, llava_next: LlavaNextForConditionalGeneration), written from the modeling file without
a device: writes calibrate/cases/families39-input.jsonl. Widths follow llava-hf/llava-v1.6-mistral-7b-hf and
llava-v1.6-vicuna-7b-hf (CLIP ViT-L/14-336 tower, 1024 -> 4096 projector, Mistral-7B / Vicuna-7B text) with the
decoder cut to 2 layers and some rows' tower cut to 6 or 12 layers, so each row fits well under 60 GiB. Image sizes
(case key image_hw, [height, width]) pick different anyres grids from the default pinpoints:
  672 x 672   -> 2 x 2 grid, 5 tiles, 2928 tokens     336 x 1008 -> 1 x 3, 4 tiles, 2328 tokens
  500 x 400   -> 2 x 2, 5 tiles, 2448 tokens (cropped to 38 columns)
  336 x 336 (absent) -> 1 x 2, 3 tiles, 1176 tokens   400 x 900  -> 1 x 3, 4 tiles, 1896 tokens
(derived in tests/families/test_family_set39_llava_next.cpp). seq_len leaves the harness's layout room: 4 text
tokens, then each image's tokens and 3 more. Caps: two copies of the 672 x 672 bf16 row under memory_cap_gib near its
predicted peak (set from the prediction at the commit that adds this file, then frozen).
Usage: python3 calibrate/cases/make_families39.py > calibrate/cases/families39-input.jsonl"""
import json

CAP_LO, CAP_HI = 10.5, 12.4  # the uncapped f39-lnx-mis-bf16-b1s3000-672 row predicted 10913.8 MiB allocated, 12350 reserved (this commit)

CLIP = {"model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16,
        "image_size": 336, "patch_size": 14, "projection_dim": 768, "hidden_act": "quick_gelu",
        "layer_norm_eps": 1e-05, "num_hidden_layers": 24}
MISTRAL = {"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
           "num_key_value_heads": 8, "vocab_size": 32064, "max_position_embeddings": 32768, "rms_norm_eps": 1e-05,
           "rope_theta": 1000000.0, "sliding_window": None, "num_hidden_layers": 2}
VICUNA = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
          "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 4096, "rms_norm_eps": 1e-05,
          "pad_token_id": 0, "num_hidden_layers": 2}
PINPOINTS = [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]]


def config(text, vision_layers):
    return {"vision_config": dict(CLIP, num_hidden_layers=vision_layers), "text_config": text,
            "image_token_index": 32000, "projector_hidden_act": "gelu", "vision_feature_layer": -2,
            "vision_feature_select_strategy": "default", "multimodal_projector_bias": True,
            "image_grid_pinpoints": PINPOINTS, "image_seq_length": 576, "tie_word_embeddings": False}


def row(id_, text, vl, mode, b, seq, prec, images=1, hw=None, ckpt=False, lora=None, gen=0, cap=None):
    r = {"id": id_, "model": {"source": "huggingface", "model_type": "llava_next", "config": config(text, vl),
                              "attn_implementation": "sdpa"},
         "mode": mode, "batch_size": b, "seq_len": seq, "precision": prec}
    if mode == "training":
        r.update({"optimizer": "adamw", "optimizer_impl": "foreach", "grad_checkpointing": ckpt,
                  "grad_accum_steps": 1, "images_per_sample": images})
        if hw is not None:
            r["image_hw"] = hw
    else:
        r["generate_tokens"] = gen
    if lora is not None:
        r["lora"] = lora
    r["holdout"] = True
    if cap is not None:
        r["memory_cap_gib"] = cap
    return r


LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}
rows = [
    row("f39-lnx-mis-bf16-b1s3000-672", MISTRAL, 24, "training", 1, 3000, "bf16", hw=[672, 672]),
    row("f39-lnx-mis-ampbf16-b2s2400-336x1008-v6", MISTRAL, 6, "training", 2, 2400, "amp_bf16", hw=[336, 1008]),
    row("f39-lnx-vic-bf16-b2s2500-500x400-v12", VICUNA, 12, "training", 2, 2500, "bf16", hw=[500, 400]),
    row("f39-lnx-mis-bf16-lora-b2s3000-672", MISTRAL, 24, "training", 2, 3000, "bf16", hw=[672, 672], lora=LORA),
    row("f39-lnx-mis-bf16-ckpt-b4s1300-336-v6", MISTRAL, 6, "training", 4, 1300, "bf16", ckpt=True),
    row("f39-lnx-vic-ampbf16-b1s4000-2img-400x900-v6", VICUNA, 6, "training", 1, 4000, "amp_bf16", images=2,
        hw=[400, 900]),
    row("f39-lnx-mis-bf16-text-b2s2048", MISTRAL, 24, "training", 2, 2048, "bf16", images=0),
    row("f39-lnx-mis-infer-bf16-b2s1024-g16", MISTRAL, 24, "inference", 2, 1024, "bf16", gen=16),
]
if CAP_LO is not None:
    rows += [
        row("f39-lnx-mis-bf16-b1s3000-672-cap-lo", MISTRAL, 24, "training", 1, 3000, "bf16", hw=[672, 672], cap=CAP_LO),
        row("f39-lnx-mis-bf16-b1s3000-672-cap-hi", MISTRAL, 24, "training", 1, 3000, "bf16", hw=[672, 672], cap=CAP_HI),
    ]
for r in rows:
    print(json.dumps(r))
