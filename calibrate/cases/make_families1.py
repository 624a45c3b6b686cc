#!/usr/bin/env python3
"""Family set 1 (2026-12-01): the first measurements of the families issue 12 adds (qwen3, qwen3_moe, gemma,
gemma2 training, gemma3_text, phi3, gpt_neox, olmo2, deepseek_v2 training / inference, deepseek_v3, gpt_oss,
starcoder2, t5, and the torchvision families), plus peft LoRA runs (issue 13). Measured before any of these
families was modelled: this is the set the builders are written against (tuning); family set 2 is predicted
before it is measured. Shapes are the published checkpoints' widths with fewer layers (and fewer experts), so each
case runs in seconds. Usage: python3 make_families1.py > families1-input.jsonl"""
import json

from case_helpers import hf, inference, training, vision

tr = training
tv = vision

QWEN3 = {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 6, "num_attention_heads": 16,
         "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 40960,
         "tie_word_embeddings": True, "rope_theta": 1000000}
QWEN3_MOE = {"hidden_size": 1024, "intermediate_size": 3072, "moe_intermediate_size": 384, "num_hidden_layers": 4,
             "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 16,
             "num_experts_per_tok": 4, "decoder_sparse_step": 1, "norm_topk_prob": True, "mlp_only_layers": [0],
             "vocab_size": 151936, "max_position_embeddings": 40960}
GEMMA = {"hidden_size": 2048, "intermediate_size": 16384, "num_hidden_layers": 3, "num_attention_heads": 8,
         "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192,
         "hidden_activation": "gelu_pytorch_tanh"}
GEMMA2 = {"hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 4, "num_attention_heads": 8,
          "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000, "max_position_embeddings": 8192,
          "sliding_window": 4096, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0,
          "query_pre_attn_scalar": 256}
GEMMA2_SW = dict(GEMMA2, sliding_window=512)
GEMMA3 = {"hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 6, "num_attention_heads": 4,
          "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 262144, "max_position_embeddings": 32768,
          "sliding_window": 512, "query_pre_attn_scalar": 256, "rope_theta": 1000000}
PHI3 = {"hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 3, "num_attention_heads": 32,
        "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 4096, "sliding_window": 2047,
        "original_max_position_embeddings": 4096}
PHI4MINI = {"hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 3, "num_attention_heads": 24,
            "num_key_value_heads": 8, "vocab_size": 200064, "max_position_embeddings": 4096,
            "partial_rotary_factor": 0.75, "tie_word_embeddings": True, "sliding_window": None}
NEOX = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 6, "num_attention_heads": 16,
        "vocab_size": 50304, "max_position_embeddings": 2048, "rotary_pct": 0.25, "use_parallel_residual": True,
        "tie_word_embeddings": False}
NEOX_SEQ = dict(NEOX, use_parallel_residual=False, rotary_pct=1.0, num_hidden_layers=4)
OLMO2 = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 4, "num_attention_heads": 16,
         "num_key_value_heads": 16, "vocab_size": 100352, "max_position_embeddings": 4096}
SC2 = {"hidden_size": 3072, "intermediate_size": 12288, "num_hidden_layers": 3, "num_attention_heads": 24,
       "num_key_value_heads": 2, "vocab_size": 49152, "max_position_embeddings": 16384, "sliding_window": 4096,
       "use_bias": True, "hidden_act": "gelu_pytorch_tanh"}
DSV2 = {"hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 3,
        "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512, "q_lora_rank": None,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 16,
        "num_experts_per_tok": 6, "n_shared_experts": 2, "first_k_dense_replace": 1, "vocab_size": 102400,
        "max_position_embeddings": 4096, "topk_method": "greedy", "n_group": 1, "topk_group": 1}
DSV3 = {"hidden_size": 1024, "intermediate_size": 2816, "moe_intermediate_size": 512, "num_hidden_layers": 3,
        "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 256, "q_lora_rank": 384,
        "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64, "n_routed_experts": 16,
        "num_experts_per_tok": 4, "n_group": 4, "topk_group": 2, "n_shared_experts": 1, "first_k_dense_replace": 1,
        "vocab_size": 32000, "max_position_embeddings": 4096}
OSS = {"hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 2, "num_attention_heads": 64,
       "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 8, "num_experts_per_tok": 2,
       "vocab_size": 201088, "sliding_window": 128, "max_position_embeddings": 8192,
       "layer_types": ["sliding_attention", "full_attention"]}
T5S = {"d_model": 512, "d_ff": 2048, "d_kv": 64, "num_heads": 8, "num_layers": 6, "vocab_size": 32128}
FLAN = {"d_model": 768, "d_ff": 2048, "d_kv": 64, "num_heads": 12, "num_layers": 4, "vocab_size": 32128,
        "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False}
TL8 = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 8, "num_attention_heads": 32,
       "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 4096}
Q05 = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 12, "num_attention_heads": 14,
       "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True}
GS = {"n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}

ALL_LIN = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]

CASES = [
    tr("f1-qwen3-bf16-adamw-b4s1024", hf("qwen3", QWEN3), 4, 1024, "bf16", "adamw"),
    tr("f1-qwen3-ampbf16-adamw-b2s2048-ckpt", hf("qwen3", QWEN3), 2, 2048, "amp_bf16", "adamw", ckpt=True),
    tr("f1-qwen3moe-bf16-adamw-b2s1024", hf("qwen3_moe", QWEN3_MOE), 2, 1024, "bf16", "adamw"),
    tr("f1-gemma-bf16-adamw-b2s1024", hf("gemma", GEMMA), 2, 1024, "bf16", "adamw"),
    tr("f1-gemma-ampbf16-sgdmom-b2s512", hf("gemma", GEMMA), 2, 512, "amp_bf16", "sgd_momentum"),
    tr("f1-gemma2-bf16-adamw-b2s1024-eager", hf("gemma2", GEMMA2, "eager"), 2, 1024, "bf16", "adamw"),
    tr("f1-gemma2-bf16-adamw-b2s1024", hf("gemma2", GEMMA2_SW), 2, 1024, "bf16", "adamw"),
    tr("f1-gemma3-bf16-adamw-b2s1024", hf("gemma3_text", GEMMA3), 2, 1024, "bf16", "adamw"),
    tr("f1-gemma3-ampbf16-adamw-b2s1024-eager", hf("gemma3_text", GEMMA3, "eager"), 2, 1024, "amp_bf16", "adamw"),
    tr("f1-phi3-bf16-adamw-b2s1024", hf("phi3", PHI3), 2, 1024, "bf16", "adamw"),
    tr("f1-phi4mini-ampbf16-adamw-b2s1024-ckpt", hf("phi3", PHI4MINI), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f1-neox-fp32-adamw-b4s512", hf("gpt_neox", NEOX), 4, 512, "fp32", "adamw"),
    tr("f1-neox-bf16-adamw-b4s1024", hf("gpt_neox", NEOX), 4, 1024, "bf16", "adamw"),
    tr("f1-neoxseq-ampbf16-adamw-b2s1024", hf("gpt_neox", NEOX_SEQ), 2, 1024, "amp_bf16", "adamw"),
    tr("f1-olmo2-bf16-adamw-b2s2048", hf("olmo2", OLMO2), 2, 2048, "bf16", "adamw"),
    tr("f1-olmo2-ampbf16-adamw-b2s1024-ckpt", hf("olmo2", OLMO2), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f1-sc2-bf16-adamw-b2s1024", hf("starcoder2", SC2), 2, 1024, "bf16", "adamw"),
    tr("f1-dsv2-bf16-adamw-b2s1024", hf("deepseek_v2", DSV2), 2, 1024, "bf16", "adamw"),
    tr("f1-dsv3-bf16-adamw-b2s1024", hf("deepseek_v3", DSV3), 2, 1024, "bf16", "adamw"),
    tr("f1-gptoss-bf16-adamw-b2s1024-eager", hf("gpt_oss", OSS, "eager"), 2, 1024, "bf16", "adamw"),
    tr("f1-t5s-fp32-adamw-b8s512-t128", hf("t5", T5S), 8, 512, "fp32", "adamw", target_len=128),
    tr("f1-t5s-ampbf16-adamw-b8s512-t512", hf("t5", T5S), 8, 512, "amp_bf16", "adamw", target_len=512),
    tr("f1-flant5-bf16-adafactor-b4s512-t128", hf("t5", FLAN), 4, 512, "bf16", "adafactor", impl="default",
       target_len=128),
    inference("f1-qwen3-infer-bf16-b4s1024-g8", hf("qwen3", QWEN3), 4, 1024, "bf16", 8),
    inference("f1-qwen3moe-infer-bf16-b2s1024-g4", hf("qwen3_moe", QWEN3_MOE), 2, 1024, "bf16", 4),
    inference("f1-gemma-infer-bf16-b4s1024-g8", hf("gemma", GEMMA), 4, 1024, "bf16", 8),
    inference("f1-gemma2-infer-bf16-b2s1024-g8", hf("gemma2", GEMMA2_SW), 2, 1024, "bf16", 8),
    inference("f1-gemma3-infer-bf16-b4s1024-g8", hf("gemma3_text", GEMMA3), 4, 1024, "bf16", 8),
    inference("f1-phi3-infer-bf16-b4s1024-g8", hf("phi3", PHI3), 4, 1024, "bf16", 8),
    inference("f1-neox-infer-bf16-b4s1024-g8", hf("gpt_neox", NEOX), 4, 1024, "bf16", 8),
    inference("f1-olmo2-infer-bf16-b4s1024-g8", hf("olmo2", OLMO2), 4, 1024, "bf16", 8),
    inference("f1-sc2-infer-bf16-b4s1024-g8", hf("starcoder2", SC2), 4, 1024, "bf16", 8),
    inference("f1-dsv2-infer-bf16-b2s1024-g4", hf("deepseek_v2", DSV2), 2, 1024, "bf16", 4),
    inference("f1-dsv3-infer-bf16-b2s1024-g4", hf("deepseek_v3", DSV3), 2, 1024, "bf16", 4),
    inference("f1-gptoss-infer-bf16-b2s1024-g4-eager", hf("gpt_oss", OSS, "eager"), 2, 1024, "bf16", 4),
    tv("f1-convnext_tiny-ampbf16-adamw-b32", "convnext_tiny", 32, "amp_bf16", "adamw"),
    tv("f1-efficientnet_b0-fp32-sgdmom-b32", "efficientnet_b0", 32, "fp32", "sgd_momentum"),
    tv("f1-efficientnet_v2_s-ampbf16-adamw-b16", "efficientnet_v2_s", 16, "amp_bf16", "adamw"),
    tv("f1-mobilenet_v2-fp32-sgdmom-b64", "mobilenet_v2", 64, "fp32", "sgd_momentum"),
    tv("f1-mobilenet_v3_large-ampbf16-adamw-b64", "mobilenet_v3_large", 64, "amp_bf16", "adamw"),
    tv("f1-swin_t-ampbf16-adamw-b32", "swin_t", 32, "amp_bf16", "adamw"),
    tv("f1-swin_v2_t-fp32-adamw-b16", "swin_v2_t", 16, "fp32", "adamw"),
    tv("f1-densenet121-fp32-sgdmom-b32", "densenet121", 32, "fp32", "sgd_momentum"),
    tv("f1-vgg16-ampbf16-sgdmom-b32", "vgg16", 32, "amp_bf16", "sgd_momentum"),
    tv("f1-vgg16_bn-fp32-sgdmom-b16", "vgg16_bn", 16, "fp32", "sgd_momentum"),
    tv("f1-resnext50_32x4d-ampbf16-sgdmom-b32", "resnext50_32x4d", 32, "amp_bf16", "sgd_momentum"),
    tv("f1-wide_resnet50_2-fp32-adamw-b16", "wide_resnet50_2", 16, "fp32", "adamw"),
    tv("f1-regnet_y_400mf-ampbf16-sgdmom-b64", "regnet_y_400mf", 64, "amp_bf16", "sgd_momentum"),
    tr("f1-lora-tl8-bf16-r16-all-b4s1024", hf("llama", TL8), 4, 1024, "bf16", "adamw",
       lora={"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": ALL_LIN}),
    tr("f1-lora-tl8-ampbf16-r8-qv-b4s1024", hf("llama", TL8), 4, 1024, "amp_bf16", "adamw",
       lora={"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}),
    tr("f1-lora-tl8-bf16-r64-all-b2s2048-ckpt", hf("llama", TL8), 2, 2048, "bf16", "adamw", ckpt=True,
       lora={"r": 64, "alpha": 128, "dropout": 0.1, "target_modules": ALL_LIN}),
    tr("f1-lora-q05-bf16-r16-all-b4s1024", hf("qwen2", Q05), 4, 1024, "bf16", "adamw",
       lora={"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": "all-linear"}),
    tr("f1-lora-gpt2s-fp32-r8-attn-b8s512", hf("gpt2", GS), 8, 512, "fp32", "adamw",
       lora={"r": 8, "alpha": 16, "dropout": 0.1, "target_modules": ["c_attn"]}),
]

if __name__ == "__main__":
    for c in CASES:
        print(json.dumps(c))
