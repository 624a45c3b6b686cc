#!/usr/bin/env python3
"""Family set 4 (2026-12-02): granite, phi, stablelm, cohere, measured before any of them was modelled (the tuning
rows the builders are written against; a held-out set on other shapes follows, predicted before it is measured).
Shapes follow the published checkpoints' widths with few layers (granite-3.x-2b, phi-1.5, stablelm-2-1.6b,
command-r7b-like), the options that change what the forward saves switched on in one case each.
Usage: python3 make_families4.py > families4-input.jsonl"""
import json

from case_helpers import hf, inference, training

tr = training
GRANITE = {"hidden_size": 1536, "intermediate_size": 4096, "num_hidden_layers": 4, "num_attention_heads": 24,
           "num_key_value_heads": 8, "vocab_size": 49155, "max_position_embeddings": 4096,
           "embedding_multiplier": 12.0, "residual_multiplier": 0.22, "attention_multiplier": 0.015625,
           "logits_scaling": 6.0, "tie_word_embeddings": True}
PHI = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 4, "num_attention_heads": 32,
       "vocab_size": 51200, "partial_rotary_factor": 0.5, "max_position_embeddings": 2048}
PHI_QKLN = dict(PHI, qk_layernorm=True, resid_pdrop=0.1)
STABLELM = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 4, "num_attention_heads": 32,
            "num_key_value_heads": 32, "vocab_size": 50304, "partial_rotary_factor": 0.25}
STABLELM_QKLN = dict(STABLELM, num_key_value_heads=8, qk_layernorm=True, use_parallel_residual=True, use_qkv_bias=True)
COHERE = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 4, "num_attention_heads": 16,
          "num_key_value_heads": 4, "vocab_size": 256000, "logit_scale": 0.0625}

CASES = [
    tr("f4-granite-bf16-adamw-b4s1024", hf("granite", GRANITE), 4, 1024, "bf16", "adamw"),
    tr("f4-granite-ampbf16-adamw-b2s2048-ckpt", hf("granite", GRANITE), 2, 2048, "amp_bf16", "adamw", ckpt=True),
    tr("f4-granite-fp32-sgdmom-b2s1024-eager", hf("granite", GRANITE, "eager"), 2, 1024, "fp32", "sgd_momentum"),
    inference("f4-granite-infer-bf16-b4s1024-g8", hf("granite", GRANITE), 4, 1024, "bf16", 8),
    tr("f4-phi-bf16-adamw-b4s1024", hf("phi", PHI), 4, 1024, "bf16", "adamw"),
    tr("f4-phi-ampbf16-adamw-b4s1024-ckpt", hf("phi", PHI), 4, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f4-phi-qkln-ampbf16-adamw-b2s1024", hf("phi", PHI_QKLN), 2, 1024, "amp_bf16", "adamw"),
    inference("f4-phi-infer-bf16-b4s1024-g8", hf("phi", PHI), 4, 1024, "bf16", 8),
    tr("f4-stablelm-bf16-adamw-b4s1024", hf("stablelm", STABLELM), 4, 1024, "bf16", "adamw"),
    tr("f4-stablelm-ampbf16-adamw-b2s2048-ckpt", hf("stablelm", STABLELM), 2, 2048, "amp_bf16", "adamw", ckpt=True),
    tr("f4-stablelm-qkln-par-bf16-adamw-b2s1024", hf("stablelm", STABLELM_QKLN), 2, 1024, "bf16", "adamw"),
    inference("f4-stablelm-infer-bf16-b4s1024-g8", hf("stablelm", STABLELM), 4, 1024, "bf16", 8),
    tr("f4-cohere-bf16-adamw-b2s1024", hf("cohere", COHERE), 2, 1024, "bf16", "adamw"),
    tr("f4-cohere-ampbf16-adamw-b2s1024-ckpt", hf("cohere", COHERE), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    inference("f4-cohere-infer-bf16-b2s1024-g8", hf("cohere", COHERE), 2, 1024, "bf16", 8),
]

if __name__ == "__main__":
    for c in CASES:
        print(json.dumps(c))
