#!/usr/bin/env python3
"""Family set 11 (2026-12-03, twelfth session): the next families users bring, measured before any of them is
modelled (tuning rows for the builders to be written against; a held-out set on other shapes follows when they
are): modernbert and deberta-v2 (encoders fine-tuned for classification; masked-LM training here), ernie4_5,
exaone4, seed_oss, arcee (Llama-like decoders with their own twists), granitemoe (a small MoE). Shapes follow
published checkpoints' widths with few layers (ModernBERT-base, DeBERTa-v3-base, ERNIE-4.5-0.3B, EXAONE-4.0-1.2B,
Seed-OSS-36B, AFM-4.5B, granite-3.0-1b-a400m).
Usage: python3 make_families11.py > families11-input.jsonl"""
import json

from case_helpers import hf, inference, training

tr = training
MODERNBERT = {"hidden_size": 768, "intermediate_size": 1152, "num_hidden_layers": 6, "num_attention_heads": 12,
              "vocab_size": 50368}
DEBERTA = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 4, "num_attention_heads": 12,
           "vocab_size": 128100, "relative_attention": True, "pos_att_type": ["p2c", "c2p"], "position_buckets": 256,
           "max_relative_positions": -1, "norm_rel_ebd": "layer_norm", "share_att_key": True,
           "position_biased_input": False, "max_position_embeddings": 512, "type_vocab_size": 0}
ERNIE = {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 4, "num_attention_heads": 16,
         "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 103424, "tie_word_embeddings": True}
EXAONE = {"hidden_size": 2048, "intermediate_size": 4096, "num_hidden_layers": 4, "num_attention_heads": 32,
          "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 102400, "tie_word_embeddings": True}
SEED = {"hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 1, "num_attention_heads": 80,
        "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 155136}
ARCEE = {"hidden_size": 2560, "intermediate_size": 18432, "num_hidden_layers": 2, "num_attention_heads": 20,
         "num_key_value_heads": 4, "vocab_size": 128004}
GRANITEMOE = {"hidden_size": 1024, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 16,
              "num_key_value_heads": 8, "num_local_experts": 32, "num_experts_per_tok": 8, "vocab_size": 49155}

CASES = [
    tr("f11-modernbert-fp32-adamw-b8s512", hf("modernbert", MODERNBERT), 8, 512, "fp32", "adamw"),
    tr("f11-modernbert-ampbf16-adamw-b16s1024", hf("modernbert", MODERNBERT), 16, 1024, "amp_bf16", "adamw"),
    tr("f11-modernbert-bf16-adamw-b8s512-eager", hf("modernbert", MODERNBERT, "eager"), 8, 512, "bf16", "adamw"),
    tr("f11-deberta-fp32-adamw-b8s512-eager", hf("deberta-v2", DEBERTA, "eager"), 8, 512, "fp32", "adamw"),
    tr("f11-deberta-ampbf16-adamw-b16s256-eager", hf("deberta-v2", DEBERTA, "eager"), 16, 256, "amp_bf16", "adamw"),
    tr("f11-deberta-bf16-adamw-b8s512", hf("deberta-v2", DEBERTA), 8, 512, "bf16", "adamw"),
    tr("f11-ernie-bf16-adamw-b4s2048", hf("ernie4_5", ERNIE), 4, 2048, "bf16", "adamw"),
    tr("f11-ernie-ampbf16-adamw-b4s1024-ckpt", hf("ernie4_5", ERNIE), 4, 1024, "amp_bf16", "adamw", ckpt=True),
    inference("f11-ernie-infer-bf16-b4s1024-g8", hf("ernie4_5", ERNIE), 4, 1024, "bf16", 8),
    tr("f11-exaone-bf16-adamw-b2s2048", hf("exaone4", EXAONE), 2, 2048, "bf16", "adamw"),
    tr("f11-exaone-fp32-adamw-b1s512-eager", hf("exaone4", EXAONE, "eager"), 1, 512, "fp32", "adamw"),
    inference("f11-exaone-infer-bf16-b4s1024-g8", hf("exaone4", EXAONE), 4, 1024, "bf16", 8),
    tr("f11-seed-bf16-adamw-b1s2048", hf("seed_oss", SEED), 1, 2048, "bf16", "adamw"),
    tr("f11-arcee-ampbf16-adamw-b2s1024", hf("arcee", ARCEE), 2, 1024, "amp_bf16", "adamw"),
    tr("f11-granitemoe-bf16-adamw-b2s1024", hf("granitemoe", GRANITEMOE), 2, 1024, "bf16", "adamw"),
    tr("f11-granitemoe-ampbf16-adamw-b2s1024-ckpt", hf("granitemoe", GRANITEMOE), 2, 1024, "amp_bf16", "adamw",
       ckpt=True),
]

if __name__ == "__main__":
    for c in CASES:
        print(json.dumps(c))
