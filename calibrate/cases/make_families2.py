#!/usr/bin/env python3
"""Family set 2 (2026-12-01): held out. Written after the family builders of set 1 and predicted (memplan validate at
a named commit) before it was measured: other widths (published checkpoints' hidden sizes), precisions, eager /
sdpa, checkpointing, sliding windows shorter than the sequence, generation lengths, image sizes and LoRA ranks /
targets than family set 1. Usage: python3 make_families2.py > families2-input.jsonl"""
import json

from case_helpers import hf, inference, training, vision

tr = training
tv = vision
FIX = {"decoder_start_token_id": 0, "pad_token_id": 0}

QWEN3_17 = {"hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 4, "num_attention_heads": 16,
            "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 40960,
            "tie_word_embeddings": True}
QWEN3_MOE2 = {"hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768, "num_hidden_layers": 4,
              "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 32,
              "num_experts_per_tok": 8, "decoder_sparse_step": 2, "norm_topk_prob": False, "vocab_size": 151936}
OLMO2_7 = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 2, "num_attention_heads": 32,
           "num_key_value_heads": 32, "vocab_size": 100352, "max_position_embeddings": 4096}
GEMMA7 = {"hidden_size": 3072, "intermediate_size": 24576, "num_hidden_layers": 2, "num_attention_heads": 16,
          "num_key_value_heads": 16, "head_dim": 256, "vocab_size": 256000, "hidden_activation": "gelu_pytorch_tanh"}
GEMMA2_9 = {"hidden_size": 3584, "intermediate_size": 14336, "num_hidden_layers": 2, "num_attention_heads": 16,
            "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 256000, "sliding_window": 4096,
            "query_pre_attn_scalar": 256, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0}
GEMMA2_SW1K = dict(GEMMA2_9, sliding_window=1024, num_hidden_layers=4)
GEMMA3_4 = {"hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 6, "num_attention_heads": 8,
            "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 262208, "sliding_window": 1024,
            "query_pre_attn_scalar": 256}
GEMMA3_1 = {"hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 7, "num_attention_heads": 4,
            "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 262144, "sliding_window": 512,
            "query_pre_attn_scalar": 256}
PHI3 = {"hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 4, "num_attention_heads": 32,
        "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 4096, "sliding_window": 2047}
PHI3_MED = {"hidden_size": 5120, "intermediate_size": 17920, "num_hidden_layers": 2, "num_attention_heads": 40,
            "num_key_value_heads": 10, "vocab_size": 32064, "max_position_embeddings": 4096, "sliding_window": 2047}
NEOX410 = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 8, "num_attention_heads": 16,
           "vocab_size": 50304, "max_position_embeddings": 2048, "rotary_pct": 0.25, "use_parallel_residual": True}
SC2_7 = {"hidden_size": 4608, "intermediate_size": 18432, "num_hidden_layers": 2, "num_attention_heads": 36,
         "num_key_value_heads": 4, "vocab_size": 49152, "max_position_embeddings": 16384, "sliding_window": 4096,
         "use_bias": True, "hidden_act": "gelu_pytorch_tanh"}
SC2_SW = dict(SC2_7, sliding_window=1024, hidden_size=3072, intermediate_size=12288, num_attention_heads=24,
              num_key_value_heads=2, num_hidden_layers=3)
DSV2L = {"hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 4,
         "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512, "q_lora_rank": None,
         "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 32,
         "num_experts_per_tok": 6, "n_shared_experts": 2, "first_k_dense_replace": 1, "vocab_size": 102400,
         "topk_method": "greedy", "n_group": 1, "topk_group": 1}
DSV3B = {"hidden_size": 1536, "intermediate_size": 4096, "moe_intermediate_size": 512, "num_hidden_layers": 4,
         "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 384, "q_lora_rank": 768,
         "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 32,
         "num_experts_per_tok": 8, "n_group": 8, "topk_group": 4, "n_shared_experts": 1, "first_k_dense_replace": 2,
         "vocab_size": 50000}
OSS4 = {"hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 4, "num_attention_heads": 64,
        "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 16, "num_experts_per_tok": 4,
        "vocab_size": 201088, "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]}
T5B = dict({"d_model": 768, "d_ff": 3072, "d_kv": 64, "num_heads": 12, "num_layers": 6, "vocab_size": 32128}, **FIX)
FLAN_L = dict({"d_model": 1024, "d_ff": 2816, "d_kv": 64, "num_heads": 16, "num_layers": 4, "num_decoder_layers": 3,
               "vocab_size": 32128, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False}, **FIX)
L1B8 = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 8, "num_attention_heads": 32,
        "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192, "tie_word_embeddings": True}
MIS4 = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 4, "num_attention_heads": 32,
        "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 32768, "sliding_window": None}
Q15 = {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 8, "num_attention_heads": 12,
       "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768, "tie_word_embeddings": True}
GM = {"n_layer": 24, "n_embd": 1024, "n_head": 16, "vocab_size": 50257, "n_positions": 1024}
ATTN = ["q_proj", "k_proj", "v_proj", "o_proj"]

CASES = [
    tr("f2-qwen3-17-ampbf16-adamw-b2s1024-eager", hf("qwen3", QWEN3_17, "eager"), 2, 1024, "amp_bf16", "adamw"),
    tr("f2-qwen3-17-fp32-adamw-b3s600", hf("qwen3", QWEN3_17), 3, 600, "fp32", "adamw"),
    tr("f2-qwen3moe-ampbf16-adamw-b2s1024-ckpt", hf("qwen3_moe", QWEN3_MOE2), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f2-olmo2-7-bf16-adamw-b2s1024-ckpt", hf("olmo2", OLMO2_7), 2, 1024, "bf16", "adamw", ckpt=True),
    tr("f2-olmo2-7-fp32-sgdmom-b1s512-eager", hf("olmo2", OLMO2_7, "eager"), 1, 512, "fp32", "sgd_momentum"),
    tr("f2-gemma7-ampbf16-adamw-b2s1024-ckpt", hf("gemma", GEMMA7), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f2-gemma2-9-bf16-adamw-b1s2048-eager", hf("gemma2", GEMMA2_9, "eager"), 1, 2048, "bf16", "adamw"),
    tr("f2-gemma2-sw1k-ampbf16-adamw-b1s2048", hf("gemma2", GEMMA2_SW1K), 1, 2048, "amp_bf16", "adamw"),
    tr("f2-gemma3-4-bf16-adamw-b2s2048", hf("gemma3_text", GEMMA3_4), 2, 2048, "bf16", "adamw"),
    tr("f2-gemma3-1-ampbf16-adamw-b3s1500-ckpt", hf("gemma3_text", GEMMA3_1), 3, 1500, "amp_bf16", "adamw", ckpt=True),
    tr("f2-phi3-ampbf16-adamw-b2s1024-eager", hf("phi3", PHI3, "eager"), 2, 1024, "amp_bf16", "adamw"),
    tr("f2-phi3med-bf16-adamw-b1s2048-ckpt", hf("phi3", PHI3_MED), 1, 2048, "bf16", "adamw", ckpt=True),
    tr("f2-neox410-ampfp16-adamw-b8s1024", hf("gpt_neox", NEOX410), 8, 1024, "amp_fp16", "adamw"),
    tr("f2-neox410-bf16-adamw-b2s1024-eager", hf("gpt_neox", NEOX410, "eager"), 2, 1024, "bf16", "adamw"),
    tr("f2-sc2-7-bf16-adamw-b2s2048-ckpt", hf("starcoder2", SC2_7), 2, 2048, "bf16", "adamw", ckpt=True),
    tr("f2-sc2-sw1k-ampbf16-adamw-b1s2048", hf("starcoder2", SC2_SW), 1, 2048, "amp_bf16", "adamw"),
    tr("f2-dsv2-ampbf16-adamw-b2s1024-ckpt", hf("deepseek_v2", DSV2L), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f2-dsv3-bf16-adamw-b2s2048", hf("deepseek_v3", DSV3B), 2, 2048, "bf16", "adamw"),
    tr("f2-gptoss-bf16-adamw-b1s2048-eager-ckpt", hf("gpt_oss", OSS4, "eager"), 1, 2048, "bf16", "adamw", ckpt=True),
    tr("f2-t5b-ampbf16-adamw-b8s512-t128", hf("t5", T5B), 8, 512, "amp_bf16", "adamw", target_len=128),
    tr("f2-flanl-bf16-adamw-b4s1024-t256-ckpt", hf("t5", FLAN_L), 4, 1024, "bf16", "adamw", ckpt=True, target_len=256),
    inference("f2-qwen3-17-infer-ampbf16-b8s512-g16", hf("qwen3", QWEN3_17), 8, 512, "amp_bf16", 16),
    inference("f2-qwen3moe-infer-bf16-b4s512-g8", hf("qwen3_moe", QWEN3_MOE2), 4, 512, "bf16", 8),
    inference("f2-gemma7-infer-bf16-b2s512-g8-eager", hf("gemma", GEMMA7, "eager"), 2, 512, "bf16", 8),
    inference("f2-gemma2-sw1k-infer-bf16-b2s2048-g8", hf("gemma2", GEMMA2_SW1K), 2, 2048, "bf16", 8),
    inference("f2-gemma3-1-infer-bf16-b2s2048-g16", hf("gemma3_text", GEMMA3_1), 2, 2048, "bf16", 16),
    inference("f2-phi3med-infer-bf16-b2s3000-g8", hf("phi3", PHI3_MED), 2, 3000, "bf16", 8),
    inference("f2-neox410-infer-fp32-b8s512-g16", hf("gpt_neox", NEOX410), 8, 512, "fp32", 16),
    inference("f2-olmo2-7-infer-bf16-b4s1024-g8", hf("olmo2", OLMO2_7), 4, 1024, "bf16", 8),
    inference("f2-sc2-sw1k-infer-bf16-b2s2048-g8", hf("starcoder2", SC2_SW), 2, 2048, "bf16", 8),
    inference("f2-dsv2-infer-bf16-b4s512-g8", hf("deepseek_v2", DSV2L), 4, 512, "bf16", 8),
    inference("f2-dsv3-infer-bf16-b2s1024-g8", hf("deepseek_v3", DSV3B), 2, 1024, "bf16", 8),
    inference("f2-gptoss-infer-bf16-b4s512-g8-eager", hf("gpt_oss", OSS4, "eager"), 4, 512, "bf16", 8),
    tv("f2-convnext_small-ampbf16-sgdmom-b32", "convnext_small", 32, "amp_bf16", "sgd_momentum"),
    tv("f2-efficientnet_b3-ampbf16-adamw-b16-i300", "efficientnet_b3", 16, "amp_bf16", "adamw", image=300),
    tv("f2-efficientnet_v2_m-fp32-sgdmom-b8", "efficientnet_v2_m", 8, "fp32", "sgd_momentum"),
    tv("f2-mobilenet_v3_small-fp32-adamw-b128", "mobilenet_v3_small", 128, "fp32", "adamw"),
    tv("f2-mobilenet_v2-ampbf16-sgdmom-b96-i160", "mobilenet_v2", 96, "amp_bf16", "sgd_momentum", image=160),
    tv("f2-swin_s-ampbf16-adamw-b16", "swin_s", 16, "amp_bf16", "adamw"),
    tv("f2-swin_v2_s-ampbf16-adamw-b8", "swin_v2_s", 8, "amp_bf16", "adamw"),
    tv("f2-densenet169-ampbf16-sgdmom-b32", "densenet169", 32, "amp_bf16", "sgd_momentum"),
    tv("f2-vgg16_bn-ampbf16-sgdmom-b24", "vgg16_bn", 24, "amp_bf16", "sgd_momentum"),
    tv("f2-resnext101_32x8d-ampbf16-sgdmom-b16", "resnext101_32x8d", 16, "amp_bf16", "sgd_momentum"),
    tv("f2-wide_resnet101_2-ampbf16-adamw-b16", "wide_resnet101_2", 16, "amp_bf16", "adamw"),
    tv("f2-regnet_y_1_6gf-fp32-sgdmom-b32", "regnet_y_1_6gf", 32, "fp32", "sgd_momentum"),
    tr("f2-lora-l1b8-ampbf16-r32-all-b2s2048", hf("llama", L1B8), 2, 2048, "amp_bf16", "adamw",
       lora={"r": 32, "alpha": 64, "dropout": 0.05, "target_modules": "all-linear"}),
    tr("f2-lora-mis4-bf16-r16-attn-b2s2048-ckpt", hf("mistral", MIS4), 2, 2048, "bf16", "adamw", ckpt=True,
       lora={"r": 16, "alpha": 32, "dropout": 0.1, "target_modules": ATTN}),
    tr("f2-lora-q15-bf16-r8-all-b4s1024-nodrop", hf("qwen2", Q15), 4, 1024, "bf16", "adamw",
       lora={"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": "all-linear"}),
    tr("f2-lora-gpt2m-ampbf16-r16-b8s512", hf("gpt2", GM), 8, 512, "amp_bf16", "adamw",
       lora={"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": ["c_attn", "c_proj", "c_fc"]}),
    tr("f2-lora-l1b8-bf16-r64-all-b1s4096-ckpt-eager", hf("llama", L1B8, "eager"), 1, 4096, "bf16", "adamw",
       ckpt=True, lora={"r": 64, "alpha": 16, "dropout": 0.05, "target_modules": "all-linear"}),
]

if __name__ == "__main__":
    for c in CASES:
        print(json.dumps(c))
