#!/usr/bin/env python3
"""Family set 29 (twenty-second session), held out: frozen expert weights in the mixture-of-experts families
family set 28 did not cover. Set 28 found that autograd saves a product's input only when the weight trains, so
frozen experts' grouped_mm keeps no input (gpt-oss, DeepSeek-V3 with adapters on the attention). These rows test that
rule where it was not measured: LoRA on the attention of Mixtral, Qwen3-MoE, Qwen2-MoE (shared expert), OLMoE and
DeepSeek-V2, and a full fine-tune of Qwen3-MoE with two of its layers frozen (`frozen_layers`: every weight of those
layers frozen, their experts included). Predicted at a commit before the call that measures them.
Usage: python3 frozen_experts.py  (JSONL)"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, training  # noqa: E402

MIX_2L = {"hidden_size": 1024, "intermediate_size": 3584, "num_hidden_layers": 2, "num_attention_heads": 16,
          "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 4096, "num_local_experts": 4,
          "num_experts_per_tok": 2, "sliding_window": None}
Q3MOE_4L = {"hidden_size": 1024, "intermediate_size": 3072, "moe_intermediate_size": 384, "num_hidden_layers": 4,
            "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 16,
            "num_experts_per_tok": 4, "decoder_sparse_step": 1, "norm_topk_prob": True, "mlp_only_layers": [0],
            "vocab_size": 151936, "max_position_embeddings": 40960}
Q2MOE_3L = {"hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
            "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
            "num_hidden_layers": 3, "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 151936}
OLMOE_2L = {"hidden_size": 2048, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 16,
            "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 50304}
DSV2_3L = {"hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 3,
           "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512, "q_lora_rank": None,
           "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 16,
           "num_experts_per_tok": 6, "n_shared_experts": 2, "first_k_dense_replace": 1, "vocab_size": 102400,
           "max_position_embeddings": 4096, "topk_method": "greedy", "n_group": 1, "topk_group": 1}
ATTN = ["q_proj", "k_proj", "v_proj", "o_proj"]


def lora(r, targets):
    return {"r": r, "alpha": 2 * r, "dropout": 0.05, "target_modules": targets}


def holdout():
    return [
        training("f29-mix2l-bf16-r16-attn-b3s1000", hf("mixtral", MIX_2L), 3, 1000, "bf16", "adamw",
                 lora=lora(16, ATTN)),
        training("f29-q3moe4l-ampbf16-r8-qv-b5s600-ckpt", hf("qwen3_moe", Q3MOE_4L), 5, 600, "amp_bf16", "adamw",
                 ckpt=True, lora=lora(8, ["q_proj", "v_proj"])),
        training("f29-q2moe3l-bf16-r16-attn-b2s1500", hf("qwen2_moe", Q2MOE_3L), 2, 1500, "bf16", "adamw",
                 lora=lora(16, ATTN)),
        training("f29-olmoe2l-bf16-r16-attn-b6s700", hf("olmoe", OLMOE_2L), 6, 700, "bf16", "adamw",
                 lora=lora(16, ATTN)),
        training("f29-dsv2-3l-bf16-r8-attn-b2s1200", hf("deepseek_v2", DSV2_3L), 2, 1200, "bf16", "adamw",
                 lora=lora(8, ["q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"])),
        training("f29-q3moe4l-bf16-adamw-frozen12-b3s1000", hf("qwen3_moe", Q3MOE_4L), 3, 1000, "bf16", "adamw",
                 frozen_layers=[1, 2]),
    ]


if __name__ == "__main__":
    import json
    for c in holdout():
        c["holdout"] = True
        print(json.dumps(c))
