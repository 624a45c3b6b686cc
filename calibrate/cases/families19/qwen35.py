#!/usr/bin/env python3
"""Family set 19, qwen35: the hybrid Gated DeltaNet decoders Qwen3-Next (qwen3_next), Qwen3.5 dense (qwen3_5_text)
and Qwen3.5 MoE (qwen3_5_moe_text), built with AutoModelForCausalLM. Layers interleave Gated DeltaNet linear
attention (a causal depthwise conv1d, the gated delta rule run by transformers' PyTorch fallbacks in fp32, a gated
RMSNorm) with gated full attention (q_proj twice as wide, a sigmoid output gate, q/k norms, partial rotary).
Published widths with few layers (4 = 3 linear + 1 full; 2 = 1 + 1 where the experts or the vocabulary make the
step large):
  Qwen/Qwen3-Next-80B-A3B   hidden 2048, 16 heads / 2 KV of 256, linear 16 key / 32 value heads of 128,
                            512 experts top 10 of width 512, shared expert 512, vocabulary 151936
  Qwen/Qwen3.5-9B           hidden 4096, MLP 12288, 16 heads / 4 KV of 256, linear 16 / 32 heads, vocabulary 248320
  Qwen/Qwen3.5-27B          hidden 5120, MLP 17408, 24 heads / 4 KV of 256, linear 16 / 48 heads
  Qwen/Qwen3.5-35B-A3B      hidden 2048, 16 heads / 2 KV, linear 16 / 32 heads, 256 experts top 8 of width 512,
                            shared expert 512, vocabulary 248320
Tuning rows (f19-q3n / q35 / q35m-*) are measured with whole-run allocator recordings before the builder exists;
held-out rows (f20-*) are other shapes and settings, predicted at the final commit and measured blind.
Usage: python3 qwen35.py > qwen35.jsonl   (tuning rows, then held-out rows, one JSON object per line)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

L, F = "linear_attention", "full_attention"
Q3N = {"hidden_size": 2048, "intermediate_size": 5120, "num_hidden_layers": 2, "num_attention_heads": 16,
       "num_key_value_heads": 2, "head_dim": 256, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
       "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "num_experts": 512,
       "num_experts_per_tok": 10, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
       "vocab_size": 151936, "layer_types": [L, F]}
Q3N64 = dict(Q3N, num_hidden_layers=4, num_experts=64, layer_types=[L, L, L, F])
Q35_9B = {"hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 4, "num_attention_heads": 16,
          "num_key_value_heads": 4, "head_dim": 256, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
          "linear_key_head_dim": 128, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
          "vocab_size": 248320, "full_attention_interval": 4}
Q35_9B2 = dict(Q35_9B, num_hidden_layers=2, full_attention_interval=2)
Q35_27B = dict(Q35_9B, hidden_size=5120, intermediate_size=17408, num_attention_heads=24,
               linear_num_value_heads=48)
Q35M = {"hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 2,
        "head_dim": 256, "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
        "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "num_experts": 256, "num_experts_per_tok": 8,
        "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "vocab_size": 248320,
        "full_attention_interval": 4}
Q35M128 = dict(Q35M, num_hidden_layers=2, full_attention_interval=2, num_experts=128)

Q3, Q5, Q5M = "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"


def tuning():
    return [
        training("f19-q3n-bf16-b1s4096-2l", hf(Q3, Q3N), 1, 4096, "bf16", "adamw", _est_gib=44),
        training("f19-q3n64-ampbf16-b2s2048-ckpt", hf(Q3, Q3N64), 2, 2048, "amp_bf16", "adamw", ckpt=True,
                 _est_gib=34),
        training("f19-q35-bf16-b1s4096", hf(Q5, Q35_9B), 1, 4096, "bf16", "adamw", _est_gib=42),
        training("f19-q35-fp32-b1s1000-eager-2l", hf(Q5, Q35_9B2, "eager"), 1, 1000, "fp32", "adamw", _est_gib=46),
        training("f19-q35m-bf16-b3s1024", hf(Q5M, Q35M), 3, 1024, "bf16", "adamw", _est_gib=48),
        dict(inference("f19-q35m-infer-bf16-b4s1000-g32", hf(Q5M, Q35M), 4, 1000, "bf16", 32), _est_gib=14),
    ]


def holdout():
    return [
        dict(inference("f20-q3n-infer-bf16-b3s1500-g24", hf(Q3, Q3N), 3, 1500, "bf16", 24), _est_gib=14),
        training("f20-q35-27b-bf16-b2s1500-ckpt", hf(Q5, Q35_27B), 2, 1500, "bf16", "adamw", ckpt=True,
                 _est_gib=44),
        training("f20-q35m128-ampfp16-b3s1000-acc2-2l", hf(Q5M, Q35M128), 3, 1000, "amp_fp16", "adamw", accum=2,
                 _est_gib=42),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
