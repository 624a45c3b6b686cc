#!/usr/bin/env python3
"""Family set 19, gemma4 (Gemma 4 text decoder, Gemma4ForCausalLM built from a gemma4_text config): published widths
of E2B / E4B (per-layer input embeddings, KV sharing across the last layers, double-wide MLP), the dense 31B
(global head_dim 512 with attention_k_eq_v and num_global_key_value_heads on full-attention layers) and the
26B-A4B MoE (128 experts, top 8, beside the dense MLP), with few layers. Vocabulary 262144 and final logit
softcapping 30. Tuning rows (f19-g4-*) are measured with whole-run allocator recordings before the builder exists;
held-out rows (f20-g4-*) are other shapes and settings, predicted at the final commit and measured blind.
Usage: python3 gemma4.py > gemma4.jsonl   (tuning rows, then held-out rows, one JSON object per line)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

S, F = "sliding_attention", "full_attention"
# google/gemma-4-E2B text_config widths; 8 of 35 layers, the last 3 sharing KV (layers 5, 6 reuse layer 3's
# sliding keys / values, layer 7 reuses layer 4's full ones), double-wide MLP on the shared layers
E2B = {"hidden_size": 1536, "intermediate_size": 6144, "num_hidden_layers": 8, "num_attention_heads": 8,
       "num_key_value_heads": 1, "head_dim": 256, "global_head_dim": 512, "vocab_size": 262144,
       "vocab_size_per_layer_input": 262144, "hidden_size_per_layer_input": 256, "num_kv_shared_layers": 3,
       "use_double_wide_mlp": True, "sliding_window": 512, "final_logit_softcapping": 30.0,
       "max_position_embeddings": 131072, "layer_types": [S, S, S, S, F, S, S, F]}
E2B6 = dict(E2B, num_hidden_layers=6, num_kv_shared_layers=2, layer_types=[S, S, F, S, S, F])
# google/gemma-4-E4B text_config widths; 7 of 42 layers, the last 3 sharing KV, no double-wide MLP
E4B = dict(E2B, hidden_size=2560, intermediate_size=10240, num_key_value_heads=2, num_hidden_layers=7,
           num_kv_shared_layers=3, use_double_wide_mlp=False, layer_types=[S, S, S, F, S, S, F])
# google/gemma-4-31B text_config widths (no per-layer inputs, keys = values on full layers with 4 KV heads)
G31 = {"hidden_size": 5376, "intermediate_size": 21504, "num_hidden_layers": 3, "num_attention_heads": 32,
       "num_key_value_heads": 16, "num_global_key_value_heads": 4, "attention_k_eq_v": True, "head_dim": 256,
       "global_head_dim": 512, "vocab_size": 262144, "hidden_size_per_layer_input": 0, "sliding_window": 1024,
       "final_logit_softcapping": 30.0, "max_position_embeddings": 262144, "layer_types": [S, S, F]}
G31_4 = dict(G31, num_hidden_layers=4, layer_types=[S, S, S, F])
# google/gemma-4-26B-A4B text_config widths: dense MLP 2112 beside 128 experts of 704, top 8
MOE = {"hidden_size": 2816, "intermediate_size": 2112, "num_hidden_layers": 3, "num_attention_heads": 16,
       "num_key_value_heads": 8, "num_global_key_value_heads": 2, "attention_k_eq_v": True, "head_dim": 256,
       "global_head_dim": 512, "vocab_size": 262144, "hidden_size_per_layer_input": 0, "enable_moe_block": True,
       "num_experts": 128, "top_k_experts": 8, "moe_intermediate_size": 704, "sliding_window": 1024,
       "final_logit_softcapping": 30.0, "max_position_embeddings": 262144, "layer_types": [S, S, F]}

G4 = "gemma4_text"


def tuning():
    return [
        training("f19-g4-e2b-bf16-b2s1024", hf(G4, E2B), 2, 1024, "bf16", "adamw", _est_gib=22),
        training("f19-g4-e2b-ampbf16-b1s1500-ckpt", hf(G4, E2B), 1, 1500, "amp_bf16", "adamw", ckpt=True,
                 _est_gib=28),
        training("f19-g4-31b-bf16-b1s2048-3l", hf(G4, G31), 1, 2048, "bf16", "adamw", _est_gib=35),
        training("f19-g4-moe-bf16-b2s1024-3l", hf(G4, MOE), 2, 1024, "bf16", "adamw", _est_gib=38),
        training("f19-g4-e2b6-fp32-b1s1000-eager", hf(G4, E2B6, "eager"), 1, 1000, "fp32", "adamw", _est_gib=24),
        dict(inference("f19-g4-e2b-infer-bf16-b4s1000-g16", hf(G4, E2B), 4, 1000, "bf16", 16), _est_gib=5),
    ]


def holdout():
    return [
        dict(inference("f20-g4-31b4-infer-bf16-b2s1500-g24", hf(G4, G31_4), 2, 1500, "bf16", 24), _est_gib=10),
        dict(inference("f20-g4-moe-infer-bf16-b3s1000-g16", hf(G4, MOE), 3, 1000, "bf16", 16), _est_gib=9),
        training("f20-g4-e4b-ampfp16-b3s1000-acc2", hf(G4, E4B), 3, 1000, "amp_fp16", "adamw", accum=2,
                 _est_gib=50),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
