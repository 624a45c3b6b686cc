#!/usr/bin/env python3
"""Family set 3 (2026-12-01): held out, predicted at a named commit before measuring, after the fixes family set 2 and
the batch-3 requests led to (vision under amp, Swin V2, T5 inference and checkpointing, MoE decode steps, windows in
inference, LoRA): other shapes again, to check those fixes on configurations none of the earlier sets used.
Usage: python3 make_families3.py > families3-input.jsonl"""
import json

from case_helpers import hf, inference, training, vision

tr = training
tv = vision
FIX = {"decoder_start_token_id": 0, "pad_token_id": 0}

QWEN3_4B = {"hidden_size": 2560, "intermediate_size": 9728, "num_hidden_layers": 3, "num_attention_heads": 32,
            "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": True}
QWEN3_MOE3 = {"hidden_size": 1536, "intermediate_size": 4096, "moe_intermediate_size": 512, "num_hidden_layers": 3,
              "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 96, "num_experts": 24,
              "num_experts_per_tok": 6, "norm_topk_prob": True, "vocab_size": 151936}
GEMMA2_2B = {"hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 3, "num_attention_heads": 8,
             "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 256000, "sliding_window": 768,
             "query_pre_attn_scalar": 256, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0}
GEMMA3_12 = {"hidden_size": 3840, "intermediate_size": 15360, "num_hidden_layers": 2, "num_attention_heads": 16,
             "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 262208, "sliding_window": 1024,
             "query_pre_attn_scalar": 256}
PHI4 = {"hidden_size": 5120, "intermediate_size": 17920, "num_hidden_layers": 2, "num_attention_heads": 40,
        "num_key_value_heads": 10, "vocab_size": 100352, "max_position_embeddings": 16384, "sliding_window": None}
NEOX_14 = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 4, "num_attention_heads": 16,
           "vocab_size": 50304, "rotary_pct": 0.25, "use_parallel_residual": True}
OLMO2_1B = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 4, "num_attention_heads": 16,
            "num_key_value_heads": 16, "vocab_size": 100352}
SC2_3 = {"hidden_size": 3072, "intermediate_size": 12288, "num_hidden_layers": 2, "num_attention_heads": 24,
         "num_key_value_heads": 2, "vocab_size": 49152, "sliding_window": 4096, "use_bias": True,
         "hidden_act": "gelu_pytorch_tanh"}
DSV2Q = {"hidden_size": 1536, "intermediate_size": 6144, "moe_intermediate_size": 768, "num_hidden_layers": 3,
         "num_attention_heads": 12, "num_key_value_heads": 12, "kv_lora_rank": 384, "q_lora_rank": 768,
         "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64, "n_routed_experts": 24,
         "num_experts_per_tok": 4, "n_shared_experts": 1, "first_k_dense_replace": 1, "vocab_size": 64000,
         "topk_method": "group_limited_greedy", "n_group": 4, "topk_group": 2}
OSS2 = {"hidden_size": 2048, "intermediate_size": 2048, "num_hidden_layers": 2, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 64, "num_local_experts": 8, "num_experts_per_tok": 2,
        "vocab_size": 201088, "sliding_window": 256, "layer_types": ["sliding_attention", "full_attention"]}
T5L = dict({"d_model": 1024, "d_ff": 4096, "d_kv": 64, "num_heads": 16, "num_layers": 3, "vocab_size": 32128}, **FIX)
FLANB = dict({"d_model": 768, "d_ff": 2048, "d_kv": 64, "num_heads": 12, "num_layers": 4, "vocab_size": 32128,
              "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False}, **FIX)
TL8 = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 8, "num_attention_heads": 32,
       "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 4096}
Q05 = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 12, "num_attention_heads": 14,
       "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True}
ALL = "all-linear"

CASES = [
    tr("f3-qwen3-4b-bf16-adamw-b2s1536-ckpt", hf("qwen3", QWEN3_4B), 2, 1536, "bf16", "adamw", ckpt=True),
    tr("f3-qwen3moe-bf16-adamw-b3s768", hf("qwen3_moe", QWEN3_MOE3), 3, 768, "bf16", "adamw"),
    tr("f3-gemma2-2b-ampbf16-adamw-b2s1024-eager", hf("gemma2", GEMMA2_2B, "eager"), 2, 1024, "amp_bf16", "adamw"),
    tr("f3-gemma3-12-bf16-adamw-b1s2048-ckpt", hf("gemma3_text", GEMMA3_12), 1, 2048, "bf16", "adamw", ckpt=True),
    tr("f3-phi4-bf16-adamw-b1s2048", hf("phi3", PHI4), 1, 2048, "bf16", "adamw"),
    tr("f3-neox14-fp32-sgdmom-b2s1024", hf("gpt_neox", NEOX_14), 2, 1024, "fp32", "sgd_momentum"),
    tr("f3-olmo2-1b-ampbf16-adamw-b4s1024", hf("olmo2", OLMO2_1B), 4, 1024, "amp_bf16", "adamw"),
    tr("f3-sc2-3-ampbf16-adamw-b2s1024-eager", hf("starcoder2", SC2_3, "eager"), 2, 1024, "amp_bf16", "adamw"),
    tr("f3-dsv2q-bf16-adamw-b2s1024", hf("deepseek_v2", DSV2Q), 2, 1024, "bf16", "adamw"),
    tr("f3-gptoss2-ampbf16-adamw-b2s1024-eager", hf("gpt_oss", OSS2, "eager"), 2, 1024, "amp_bf16", "adamw"),
    tr("f3-t5l-bf16-adamw-b4s512-t256", hf("t5", T5L), 4, 512, "bf16", "adamw", target_len=256),
    tr("f3-flanb-ampbf16-adamw-b4s768-t192-ckpt", hf("t5", FLANB), 4, 768, "amp_bf16", "adamw", ckpt=True,
       target_len=192),
    inference("f3-qwen3moe-infer-ampbf16-b3s768-g8", hf("qwen3_moe", QWEN3_MOE3), 3, 768, "amp_bf16", 8),
    inference("f3-gemma2-2b-infer-bf16-b2s1500-g8", hf("gemma2", GEMMA2_2B), 2, 1500, "bf16", 8),
    inference("f3-phi4-infer-bf16-b2s1024-g8", hf("phi3", PHI4), 2, 1024, "bf16", 8),
    inference("f3-dsv2q-infer-bf16-b2s1024-g8", hf("deepseek_v2", DSV2Q), 2, 1024, "bf16", 8),
    inference("f3-gptoss2-infer-bf16-b2s1024-g8-eager", hf("gpt_oss", OSS2, "eager"), 2, 1024, "bf16", 8),
    inference("f3-t5l-infer-bf16-b4s512-g16", hf("t5", T5L), 4, 512, "bf16", 16),
    inference("f3-flanb-infer-fp32-b2s768-g8", hf("t5", FLANB), 2, 768, "fp32", 8),
    tv("f3-convnext_base-ampbf16-adamw-b16", "convnext_base", 16, "amp_bf16", "adamw"),
    tv("f3-efficientnet_b1-ampbf16-sgdmom-b32-i240", "efficientnet_b1", 32, "amp_bf16", "sgd_momentum", image=240),
    tv("f3-efficientnet_v2_s-ampfp16-adamw-b16", "efficientnet_v2_s", 16, "amp_fp16", "adamw"),
    tv("f3-mobilenet_v3_large-fp32-sgdmom-b96", "mobilenet_v3_large", 96, "fp32", "sgd_momentum"),
    tv("f3-mobilenet_v2-ampbf16-adamw-b48", "mobilenet_v2", 48, "amp_bf16", "adamw"),
    tv("f3-swin_b-ampbf16-adamw-b8", "swin_b", 8, "amp_bf16", "adamw"),
    tv("f3-swin_v2_t-ampbf16-sgdmom-b16", "swin_v2_t", 16, "amp_bf16", "sgd_momentum"),
    tv("f3-densenet121-ampbf16-sgdmom-b48", "densenet121", 48, "amp_bf16", "sgd_momentum"),
    tv("f3-vgg16-fp32-sgdmom-b16", "vgg16", 16, "fp32", "sgd_momentum"),
    tv("f3-resnext50_32x4d-ampbf16-adamw-b48", "resnext50_32x4d", 48, "amp_bf16", "adamw"),
    tv("f3-regnet_y_400mf-fp32-adamw-b64", "regnet_y_400mf", 64, "fp32", "adamw"),
    tr("f3-lora-tl8-ampbf16-r32-attn-b4s1024-ckpt", hf("llama", TL8), 4, 1024, "amp_bf16", "adamw", ckpt=True,
       lora={"r": 32, "alpha": 64, "dropout": 0.05, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}),
    tr("f3-lora-q05-fp32-r16-all-b2s1024", hf("qwen2", Q05), 2, 1024, "fp32", "adamw",
       lora={"r": 16, "alpha": 32, "dropout": 0.1, "target_modules": ALL}),
    tr("f3-lora-qwen3-bf16-r8-all-b2s2048", hf("qwen3", QWEN3_4B), 2, 2048, "bf16", "adamw",
       lora={"r": 8, "alpha": 16, "dropout": 0.05, "target_modules": ALL}),
]

if __name__ == "__main__":
    for c in CASES:
        print(json.dumps(c))
