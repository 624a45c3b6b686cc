#!/usr/bin/env python3
"""Family set 23, idefics: Idefics3 (idefics3; also the model_type of the SmolVLM v1 checkpoints) and SmolVLM /
SmolVLM2 (smolvlm), <Type>ForConditionalGeneration built by the harness plugin calibrate/harness_kinds/idefics.py
(kind vlm_idefics). Training steps with images (`images_per_sample` images in every sample, each split by the image
processor into `image_splits` [rows, cols] tiles plus the global image; [0, 0]: the global image alone), and
text-only serving with generate.
Published widths, with fewer text layers / vision blocks where the step would be large:
  HuggingFaceTB/SmolVLM-256M-Instruct  (idefics3) vision 768, 12 blocks, 12 heads, MLP 3072, image 512, patch 16,
                                       scale_factor 4 (64 tokens a tile); text SmolLM2-135M: hidden 576, MLP 1536,
                                       30 layers, 9 heads / 3 KV, vocabulary 49280, image token 49190
  HuggingFaceTB/SmolVLM-Instruct (2B)  (idefics3) vision 1152, 27 blocks, 16 heads, MLP 4304, image 384, patch 14,
                                       scale_factor 3 (81 tokens a tile); text hidden 2048, MLP 8192, 24 layers,
                                       32 heads / 32 KV, vocabulary 49155, image token 49153
  HuggingFaceTB/SmolVLM2-2.2B-Instruct (smolvlm) vision as SmolVLM-Instruct; text as it with vocabulary 49280,
                                       image token 49190
  HuggingFaceM4/Idefics3-8B-Llama3     (idefics3) vision 1152, 27 blocks, 16 heads, MLP 4304, image 364, patch 14,
                                       scale_factor 2 (169 tokens a tile); text Llama-3-8B: hidden 4096, MLP 14336,
                                       32 layers, 32 heads / 8 KV, vocabulary 128259, image token 128257
Tuning rows (f23-id3 / smv-*) are measured with whole-run allocator recordings before the builder exists;
held-out rows (f24-*) are other shapes and settings, predicted at the final commit and measured blind.
Usage: python3 idefics.py > idefics.jsonl   (tuning rows, then held-out rows, one JSON object per line)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

ID3, SMV = "idefics3", "smolvlm"
V256 = {"hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12, "image_size": 512,
        "patch_size": 16, "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-6}
V2B = {"hidden_size": 1152, "intermediate_size": 4304, "num_attention_heads": 16, "image_size": 384,
       "patch_size": 14, "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-6}
V8B = dict(V2B, image_size=364)
T256 = {"hidden_size": 576, "intermediate_size": 1536, "num_attention_heads": 9, "num_key_value_heads": 3,
        "vocab_size": 49280, "rms_norm_eps": 1e-5}
T2B = {"hidden_size": 2048, "intermediate_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 32,
       "vocab_size": 49280, "rms_norm_eps": 1e-5}
T2B_V1 = dict(T2B, vocab_size=49155)
T8B = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
       "vocab_size": 128259, "rms_norm_eps": 1e-5}


def cfg(vision, depth, text, layers, scale, image_token, pad, tied):
    """A config: `depth` vision blocks, `layers` text layers (Llama), pixel shuffle by `scale`."""
    return {"vision_config": dict(vision, num_hidden_layers=depth),
            "text_config": dict(text, num_hidden_layers=layers, tie_word_embeddings=tied, pad_token_id=pad),
            "scale_factor": scale, "image_token_id": image_token, "pad_token_id": pad, "tie_word_embeddings": tied}


def smol256(depth, layers):
    return cfg(V256, depth, T256, layers, 4, 49190, 2, False)


def smol2b(depth, layers, v1=False):
    return cfg(V2B, depth, T2B_V1 if v1 else T2B, layers, 3, 49153 if v1 else 49190, 2, False)


def idefics8b(depth, layers):
    return cfg(V8B, depth, T8B, layers, 2, 128257, 128002, False)


def img(k, rows, cols):
    return {"images_per_sample": k, "image_splits": [rows, cols]}


def tuning():
    return [
        training("f23-id3-256m-bf16-b4s1000-2x2", hf(ID3, smol256(12, 30)), 4, 1000, "bf16", "adamw",
                 _est_gib=18, **img(1, 2, 2)),
        training("f23-id3-8b-ampbf16-b1s1500-2x2-ckpt", hf(ID3, idefics8b(4, 2)), 1, 1500, "amp_bf16", "adamw",
                 ckpt=True, _est_gib=32, **img(1, 2, 2)),
        training("f23-smv-2b-bf16-b2s1200-2img-1x2", hf(SMV, smol2b(6, 4)), 2, 1200, "bf16", "adamw",
                 _est_gib=12, **img(2, 1, 2)),
        training("f23-smv-256m-fp32-eager-b2s600-2x1-acc2", hf(SMV, smol256(6, 8), "eager"), 2, 600, "fp32",
                 "adamw", accum=2, _est_gib=8, **img(1, 2, 1)),
        training("f23-id3-2b-ampfp16-b3s1000-3x3", hf(ID3, smol2b(6, 4, v1=True)), 3, 1000, "amp_fp16", "adamw",
                 _est_gib=26, **img(1, 3, 3)),
        dict(inference("f23-smv-2b-infer-bf16-b3s1000-g32", hf(SMV, smol2b(2, 8)), 3, 1000, "bf16", 32),
             _est_gib=5),
    ]


def holdout():
    # No SmolVLM row under autocast with images: SmolVLMModel.inputs_merger's `image_embeds[image_mask] = ...`
    # (index_put_) raises when the fp32 embeddings meet the 16-bit projected image features (memplan refuses it).
    return [
        training("f24-smv-2b-fp32-b1s1400-3x3-ckpt", hf(SMV, smol2b(4, 4)), 1, 1400, "fp32", "adamw",
                 ckpt=True, _est_gib=14, **img(1, 3, 3)),
        training("f24-id3-8b-ampbf16-eager-b2s1000-2img-global", hf(ID3, idefics8b(3, 2), "eager"), 2, 1000,
                 "amp_bf16", "adamw", _est_gib=34, **img(2, 0, 0)),
        dict(inference("f24-id3-256m-infer-bf16-b5s1500-g16", hf(ID3, smol256(12, 30)), 5, 1500, "bf16", 16),
             _est_gib=3),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
