#!/usr/bin/env python3
"""Family set 7 (2026-12-02, eleventh session): qwen2_moe, opt, roberta / xlm-roberta (and gptj, falcon), measured
before any of them was modelled: the tuning rows the builders are written against. A held-out set on other shapes
follows, predicted before it is measured. Shapes follow published checkpoints' widths with few layers
(Qwen1.5-MoE-A2.7B, OPT-1.3B and OPT-350M, roberta-base, xlm-roberta-base, GPT-J-6B, Falcon-7B), the options that
change what the forward saves switched on in one case each.
Usage: python3 make_families7.py > families7-input.jsonl"""
import json

from case_helpers import hf, inference, training

tr = training
QWEN2MOE = {"hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
            "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
            "num_hidden_layers": 3, "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 151936}
QWEN2MOE_DENSE1 = dict(QWEN2MOE, mlp_only_layers=[1], norm_topk_prob=True)
OPT = {"hidden_size": 2048, "ffn_dim": 8192, "num_hidden_layers": 4, "num_attention_heads": 32, "vocab_size": 50272,
       "max_position_embeddings": 2048, "word_embed_proj_dim": 2048}
OPT350 = {"hidden_size": 1024, "ffn_dim": 4096, "num_hidden_layers": 4, "num_attention_heads": 16,
          "vocab_size": 50272, "max_position_embeddings": 2048, "word_embed_proj_dim": 512,
          "do_layer_norm_before": False}
ROBERTA = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_attention_heads": 12,
           "vocab_size": 50265, "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1,
           "bos_token_id": 0, "eos_token_id": 2}
XLMR = dict(ROBERTA, vocab_size=250002)
GPTJ = {"n_embd": 4096, "n_layer": 2, "n_head": 16, "rotary_dim": 64, "vocab_size": 50400, "n_positions": 2048}
FALCON = {"hidden_size": 4544, "num_hidden_layers": 2, "num_attention_heads": 71, "vocab_size": 65024,
          "multi_query": True, "parallel_attn": True, "bias": False, "new_decoder_architecture": False}

CASES = [
    tr("f7-q2moe-bf16-adamw-b2s1024", hf("qwen2_moe", QWEN2MOE), 2, 1024, "bf16", "adamw"),
    tr("f7-q2moe-ampbf16-adamw-b2s1024-ckpt", hf("qwen2_moe", QWEN2MOE), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f7-q2moe-dense1-fp32-sgdmom-b1s512-eager", hf("qwen2_moe", QWEN2MOE_DENSE1, "eager"), 1, 512, "fp32",
       "sgd_momentum"),
    inference("f7-q2moe-infer-bf16-b4s512-g8", hf("qwen2_moe", QWEN2MOE), 4, 512, "bf16", 8),
    tr("f7-opt-bf16-adamw-b4s1024", hf("opt", OPT), 4, 1024, "bf16", "adamw"),
    tr("f7-opt-ampbf16-adamw-b4s1024-ckpt", hf("opt", OPT), 4, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f7-opt350-fp32-adamw-b4s512-eager", hf("opt", OPT350, "eager"), 4, 512, "fp32", "adamw"),
    inference("f7-opt-infer-bf16-b4s1024-g8", hf("opt", OPT), 4, 1024, "bf16", 8),
    tr("f7-roberta-fp32-adamw-b8s512", hf("roberta", ROBERTA), 8, 512, "fp32", "adamw"),
    tr("f7-roberta-ampbf16-adamw-b16s512", hf("roberta", ROBERTA), 16, 512, "amp_bf16", "adamw"),
    tr("f7-roberta-bf16-adamw-b8s512-eager", hf("roberta", ROBERTA, "eager"), 8, 512, "bf16", "adamw"),
    tr("f7-xlmr-ampbf16-adamw-b8s256", hf("xlm-roberta", XLMR), 8, 256, "amp_bf16", "adamw"),
    tr("f7-gptj-bf16-adamw-b2s1024", hf("gptj", GPTJ), 2, 1024, "bf16", "adamw"),
    inference("f7-gptj-infer-bf16-b2s1024-g8", hf("gptj", GPTJ), 2, 1024, "bf16", 8),
    tr("f7-falcon-bf16-adamw-b2s1024", hf("falcon", FALCON), 2, 1024, "bf16", "adamw"),
    inference("f7-falcon-infer-bf16-b2s1024-g8", hf("falcon", FALCON), 2, 1024, "bf16", 8),
]

if __name__ == "__main__":
    for c in CASES:
        print(json.dumps(c))
