#!/usr/bin/env python3
"""Family set 21, contrastive image-text models: clip (CLIPModel), siglip (SiglipModel), siglip2 (Siglip2Model, NaFlex
patch input). Training: model(pixel_values, input_ids, return_loss=True).loss (CLIP's symmetric cross entropy over the
B x B logits, SigLIP's sigmoid loss); inference: one forward without the loss under inference_mode. The harness plugin
calibrate/harness_kinds/clip.py draws the batch: images at the vision config's image_size (siglip2: image_grid [1, h, w]
patches padded to max_num_patches, with pixel_attention_mask and spatial_shapes), captions of seq_len random ids
(the processors' padding="max_length": 77 for CLIP, 64 for SigLIP; one CLIP row padded to the longest, 33).
Published widths (openai/clip-vit-base-patch32, clip-vit-large-patch14(-336), clip-vit-base-patch16,
google/siglip-base-patch16-224, siglip-so400m-patch14-384, siglip2-base-patch16-naflex, siglip2-so400m-patch16-naflex)
with fewer layers where the step would be large. tuning(): measured before the builder is written (ids f21-*);
holdout(): other shapes and settings, predicted at the final commit and measured blind (ids f22-*).
Usage: python3 clip.py   (JSONL: tuning, then holdout)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

# openai/clip-vit-base-patch32
CLIP_B32 = {"projection_dim": 512,
            "text_config": {"vocab_size": 49408, "hidden_size": 512, "intermediate_size": 2048,
                            "num_hidden_layers": 12, "num_attention_heads": 8, "max_position_embeddings": 77,
                            "bos_token_id": 0, "eos_token_id": 2},
            "vision_config": {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
                              "num_attention_heads": 12, "image_size": 224, "patch_size": 32}}
# openai/clip-vit-base-patch16
CLIP_B16 = dict(CLIP_B32, vision_config=dict(CLIP_B32["vision_config"], patch_size=16))
# openai/clip-vit-large-patch14 (and -336)
CLIP_L14 = {"projection_dim": 768,
            "text_config": {"vocab_size": 49408, "hidden_size": 768, "intermediate_size": 3072,
                            "num_hidden_layers": 12, "num_attention_heads": 12, "max_position_embeddings": 77,
                            "bos_token_id": 0, "eos_token_id": 2},
            "vision_config": {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
                              "num_attention_heads": 16, "image_size": 224, "patch_size": 14}}
CLIP_L14_336 = dict(CLIP_L14, vision_config=dict(CLIP_L14["vision_config"], image_size=336))
CLIP_L14_336_6L = dict(CLIP_L14, text_config=dict(CLIP_L14["text_config"], num_hidden_layers=4),
                       vision_config=dict(CLIP_L14["vision_config"], image_size=336, num_hidden_layers=6))
# google/siglip-base-patch16-224
SIG_B16 = {"text_config": {"vocab_size": 32000, "hidden_size": 768, "intermediate_size": 3072,
                           "num_hidden_layers": 12, "num_attention_heads": 12, "max_position_embeddings": 64},
           "vision_config": {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
                             "num_attention_heads": 12, "image_size": 224, "patch_size": 16}}


def so400m(layers, text_layers):
    """google/siglip-so400m-patch14-384 widths with fewer layers."""
    return {"text_config": {"vocab_size": 32000, "hidden_size": 1152, "intermediate_size": 4304,
                            "num_hidden_layers": text_layers, "num_attention_heads": 16,
                            "max_position_embeddings": 64},
            "vision_config": {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": layers,
                              "num_attention_heads": 16, "image_size": 384, "patch_size": 14}}


# google/siglip2-base-patch16-naflex
SIG2_B16 = {"text_config": {"vocab_size": 256000, "hidden_size": 768, "intermediate_size": 3072,
                            "num_hidden_layers": 12, "num_attention_heads": 12, "max_position_embeddings": 64},
            "vision_config": {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
                              "num_attention_heads": 12, "patch_size": 16, "num_patches": 256}}
# google/siglip2-so400m-patch16-naflex
SIG2_SO400M = {"text_config": {"vocab_size": 256000, "hidden_size": 1152, "intermediate_size": 4304,
                               "num_hidden_layers": 27, "num_attention_heads": 16, "max_position_embeddings": 64},
               "vision_config": {"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27,
                                 "num_attention_heads": 16, "patch_size": 16, "num_patches": 256}}


def train(id, mt, cfg, b, s, prec, attn="sdpa", ckpt=False, accum=1, est=None, **extra):
    return training(id, hf(mt, cfg, attn), b, s, prec, "adamw", ckpt=ckpt, accum=accum, _est_gib=est, **extra)


def fwd(id, mt, cfg, b, s, prec, attn="sdpa", est=None, **extra):
    c = inference(id, hf(mt, cfg, attn), b, s, prec, 0)
    c.update(extra)
    c["_est_gib"] = est
    return c


def tuning():
    return [
        train("f21-clip-b32-fp32-b128", "clip", CLIP_B32, 128, 77, "fp32", est=18),
        train("f21-clip-l14-ampbf16-b64-ckpt", "clip", CLIP_L14, 64, 77, "amp_bf16", ckpt=True, est=12),
        train("f21-clip-l14336-bf16-b32s33-eager-6l", "clip", CLIP_L14_336_6L, 32, 33, "bf16", "eager", est=12),
        train("f21-sig-b16-ampfp16-b96-acc2", "siglip", SIG_B16, 96, 64, "amp_fp16", accum=2, est=20),
        train("f21-sig2-b16-bf16-b64-g12x16p256", "siglip2", SIG2_B16, 64, 64, "bf16", est=14,
              image_grid=[1, 12, 16], max_num_patches=256),
        fwd("f21-sig-so400m-infer-bf16-b256", "siglip", so400m(27, 27), 256, 64, "bf16", est=8),
    ]


def holdout():
    return [
        train("f22-clip-b16-ampfp16-b96-acc2", "clip", CLIP_B16, 96, 77, "amp_fp16", accum=2, est=18),
        train("f22-sig-so400m-ampbf16-b40-ckpt-8l", "siglip", so400m(8, 8), 40, 64, "amp_bf16", ckpt=True, est=14),
        fwd("f22-sig2-so400m-infer-fp32-b48-g16x16", "siglip2", SIG2_SO400M, 48, 64, "fp32", est=8,
            image_grid=[1, 16, 16], max_num_patches=256),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
