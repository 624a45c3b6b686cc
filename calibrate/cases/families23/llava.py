#!/usr/bin/env python3
"""Family set 23, llava: LLaVA (llava, LlavaForConditionalGeneration: a CLIP or SigLIP vision tower run with
output_hidden_states, the layer vision_feature_layer selected, the two-linear projector, masked_scatter into a Llama /
Qwen2 text model) and PaliGemma / PaliGemma 2 (paligemma: SigLIP tower, one linear projector, Gemma / Gemma 2 text
model with the prefix-LM mask from token_type_ids), built by the harness plugin calibrate/harness_kinds/llava.py
(kind vlm_llava). Training steps with images (`images_per_sample` images of vision_config.image_size in every sample,
laid out as the processors expand them), and text-only serving with generate.
Published widths with few text layers and few vision layers:
  llava-hf/llava-1.5-7b-hf              CLIP ViT-L/14-336 (1024, 24 layers, 16 heads, MLP 4096, quick_gelu);
                                        Llama 4096, MLP 11008, 32 heads, vocabulary 32064; image token 32000;
                                        vision_feature_layer -2, "default" strategy: 576 image tokens
  llava-hf/llava-interleave-qwen-0.5b-hf SigLIP so400m/14-384 (1152, 26 layers, 16 heads, MLP 4304) without head;
                                        Qwen2 896, MLP 4864, 14 heads / 2 KV, vocabulary 152000, tied; image token
                                        151646; vision_feature_layer -1, "full": 729 image tokens
  google/paligemma-3b-pt-224            SigLIP so400m/14-224 (27 layers) without head, projection 2048;
                                        Gemma 2048, MLP 16384, 8 heads / 1 KV, head 256, vocabulary 257216;
                                        image token 257152: 256 image tokens
  google/paligemma2-3b-pt-448           SigLIP so400m/14-448, projection 2304; Gemma 2 2304, MLP 9216, 8 heads / 4
                                        KV, head 256, sliding window 4096, softcaps 50 / 30; 1024 image tokens
Tuning rows (f23-lv / pg-*) are measured with whole-run allocator recordings before the builder exists; held-out
rows (f24-*) are other shapes and settings, predicted at the final commit and measured blind.
Usage: python3 llava.py > llava.jsonl   (tuning rows, then held-out rows, one JSON object per line)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

CLIP_L336 = {"model_type": "clip_vision_model", "hidden_size": 1024, "intermediate_size": 4096,
             "num_attention_heads": 16, "image_size": 336, "patch_size": 14, "projection_dim": 768,
             "hidden_act": "quick_gelu", "layer_norm_eps": 1e-5}
LLAMA7B = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
           "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5}
SIGLIP384 = {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
             "num_attention_heads": 16, "image_size": 384, "patch_size": 14, "vision_use_head": False}
QWEN05 = {"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_attention_heads": 14,
          "num_key_value_heads": 2, "vocab_size": 152000, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
          "tie_word_embeddings": True, "max_position_embeddings": 32768}
SIGLIP_PG = {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
             "num_attention_heads": 16, "patch_size": 14, "vision_use_head": False, "projector_hidden_act": "gelu_fast"}
GEMMA2B = {"model_type": "gemma", "hidden_size": 2048, "intermediate_size": 16384, "num_attention_heads": 8,
           "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 257216}
GEMMA2_2B = {"model_type": "gemma2", "hidden_size": 2304, "intermediate_size": 9216, "num_attention_heads": 8,
             "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 257216, "query_pre_attn_scalar": 256,
             "sliding_window": 4096, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0,
             "hidden_activation": "gelu_pytorch_tanh"}


def llava15(text_layers, vision_layers, feature_layer=-2, strategy="default", bias=True):
    """llava-1.5-7b-hf widths: `vision_layers` CLIP layers, `text_layers` Llama layers."""
    return {"vision_config": dict(CLIP_L336, num_hidden_layers=vision_layers),
            "text_config": dict(LLAMA7B, num_hidden_layers=text_layers),
            "image_token_index": 32000, "projector_hidden_act": "gelu", "vision_feature_layer": feature_layer,
            "vision_feature_select_strategy": strategy, "multimodal_projector_bias": bias,
            "image_seq_length": 576}


def interleave_q05(text_layers, vision_layers):
    """llava-interleave-qwen-0.5b-hf widths (SigLIP tower, Qwen2 text, tied)."""
    return {"vision_config": dict(SIGLIP384, num_hidden_layers=vision_layers),
            "text_config": dict(QWEN05, num_hidden_layers=text_layers),
            "image_token_index": 151646, "projector_hidden_act": "gelu", "vision_feature_layer": -1,
            "vision_feature_select_strategy": "full", "image_seq_length": 729, "tie_word_embeddings": True}


def pg1(text_layers, vision_layers, image=224):
    """paligemma-3b-pt-224 widths (Gemma text)."""
    return {"vision_config": dict(SIGLIP_PG, num_hidden_layers=vision_layers, image_size=image,
                                  projection_dim=2048),
            "text_config": dict(GEMMA2B, num_hidden_layers=text_layers),
            "image_token_index": 257152, "projection_dim": 2048, "hidden_size": 2048, "vocab_size": 257216}


def pg2(text_layers, vision_layers, image=448):
    """paligemma2-3b-pt-448 widths (Gemma 2 text, sliding and full layers alternating)."""
    return {"vision_config": dict(SIGLIP_PG, num_hidden_layers=vision_layers, image_size=image,
                                  projection_dim=2304),
            "text_config": dict(GEMMA2_2B, num_hidden_layers=text_layers),
            "image_token_index": 257152, "projection_dim": 2304, "hidden_size": 2304, "vocab_size": 257216}


def train(id, mt, cfg, b, s, prec, attn="sdpa", ckpt=False, accum=1, images=1, est=None):
    return training(id, hf(mt, cfg, attn), b, s, prec, "adamw", ckpt=ckpt, accum=accum, _est_gib=est,
                    images_per_sample=images)


def infer(id, mt, cfg, b, s, prec, gen, attn="sdpa", est=None):
    return dict(inference(id, hf(mt, cfg, attn), b, s, prec, gen), _est_gib=est)


def tuning():
    return [
        train("f23-lv-7b-bf16-b2s1000", "llava", llava15(2, 6), 2, 1000, "bf16", est=10),
        train("f23-lv-7b-ampbf16-b1s1500-2img-ckpt-l25", "llava", llava15(2, 6, [-2, -5]), 1, 1500, "amp_bf16",
              ckpt=True, images=2, est=16),
        train("f23-lv-iq05-fp32-eager-b1s900", "llava", interleave_q05(4, 4), 1, 900, "fp32", "eager", est=10),
        train("f23-pg-224-bf16-b4s300", "paligemma", pg1(4, 8), 4, 300, "bf16", est=16),
        train("f23-pg2-448-ampfp16-b1s1100-acc2-eager", "paligemma", pg2(4, 6), 1, 1100, "amp_fp16", "eager",
              accum=2, est=24),
        infer("f23-pg-224-infer-bf16-b3s600-g24", "paligemma", pg1(4, 4), 3, 600, "bf16", 24, est=5),
    ]


def holdout():
    return [
        train("f24-lv-7b-ampfp16-b3s700-full-nobias", "llava", llava15(2, 4, -2, "full", False), 3, 700,
              "amp_fp16", est=20),
        train("f24-pg2-448-bf16-b2s1100-ckpt", "paligemma", pg2(4, 6), 2, 1100, "bf16", ckpt=True, est=14),
        infer("f24-lv-7b-infer-bf16-b2s1200-g16", "llava", llava15(4, 6), 2, 1200, "bf16", 16, est=5),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
