#!/usr/bin/env python3
"""Family set 5 (2026-12-02): held out for granite, phi and stablelm, predicted at a named commit before it is
measured (family set 4 holds the rows their builders were written against). Other widths (granite-3.x-8b,
phi-2, a stablelm-2-12b-like layer with per-head q/k norms and the parallel residual), other precisions (amp fp16
with accumulation, fp32 eager), odd shapes, dropout, LoRA, inference with longer generation.
Usage: python3 make_families5.py MEMORY.jsonl TIMING.jsonl   (the timing file: the training rows timed one at a time)"""
import sys

from case_helpers import hf, inference, training, write_holdout

tr = training
GRANITE8B = {"hidden_size": 4096, "intermediate_size": 12800, "num_hidden_layers": 2, "num_attention_heads": 32,
             "num_key_value_heads": 8, "vocab_size": 49155, "max_position_embeddings": 4096,
             "embedding_multiplier": 12.0, "residual_multiplier": 0.22, "attention_multiplier": 0.0078125,
             "logits_scaling": 16.0, "tie_word_embeddings": True}
GRANITE2B = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 3, "num_attention_heads": 32,
             "num_key_value_heads": 8, "vocab_size": 49155, "max_position_embeddings": 4096,
             "embedding_multiplier": 12.0, "residual_multiplier": 0.22, "attention_multiplier": 0.015625,
             "logits_scaling": 8.0, "tie_word_embeddings": True}
PHI2 = {"hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 3, "num_attention_heads": 32,
        "vocab_size": 51200, "partial_rotary_factor": 0.4, "max_position_embeddings": 2048}
PHI15_DROP = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 3, "num_attention_heads": 32,
              "vocab_size": 51200, "partial_rotary_factor": 0.5, "resid_pdrop": 0.1, "embd_pdrop": 0.1}
STABLELM12 = {"hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 2, "num_attention_heads": 32,
              "num_key_value_heads": 8, "vocab_size": 100352, "partial_rotary_factor": 0.25, "qk_layernorm": True,
              "use_parallel_residual": True}
STABLELM3B = {"hidden_size": 2560, "intermediate_size": 6912, "num_hidden_layers": 3, "num_attention_heads": 32,
              "num_key_value_heads": 32, "vocab_size": 50304, "partial_rotary_factor": 0.25}
STABLELM16 = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 4, "num_attention_heads": 32,
              "num_key_value_heads": 32, "vocab_size": 100352, "partial_rotary_factor": 0.25, "use_qkv_bias": True}

MEMORY = [
    tr("f5-granite8b-bf16-adamw-b1s2048-ckpt", hf("granite", GRANITE8B), 1, 2048, "bf16", "adamw", ckpt=True),
    tr("f5-granite2b-ampfp16-adamw-b3s1000-acc2", hf("granite", GRANITE2B), 3, 1000, "amp_fp16", "adamw", accum=2),
    tr("f5-granite2b-bf16-lora16-all-b4s1024", hf("granite", GRANITE2B), 4, 1024, "bf16", "adamw",
       lora={"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": "all-linear"}),
    inference("f5-granite2b-infer-bf16-b6s1500-g16", hf("granite", GRANITE2B), 6, 1500, "bf16", 16),
    tr("f5-phi2-bf16-adamw-b2s1024", hf("phi", PHI2), 2, 1024, "bf16", "adamw"),
    tr("f5-phi2-fp32-sgdmom-b2s512-eager", hf("phi", PHI2, "eager"), 2, 512, "fp32", "sgd_momentum"),
    tr("f5-phi15drop-ampbf16-adamw-b5s768-ckpt", hf("phi", PHI15_DROP), 5, 768, "amp_bf16", "adamw", ckpt=True),
    inference("f5-phi2-infer-bf16-b3s1000-g8", hf("phi", PHI2), 3, 1000, "bf16", 8),
    tr("f5-stablelm12-bf16-adamw-b1s2048-ckpt", hf("stablelm", STABLELM12), 1, 2048, "bf16", "adamw", ckpt=True),
    tr("f5-stablelm3b-ampbf16-adamw-b3s1024", hf("stablelm", STABLELM3B), 3, 1024, "amp_bf16", "adamw"),
    tr("f5-stablelm16-ampbf16-adamw-b2s1024-eager", hf("stablelm", STABLELM16, "eager"), 2, 1024, "amp_bf16", "adamw"),
    inference("f5-stablelm16-infer-bf16-b2s2048-g16", hf("stablelm", STABLELM16), 2, 2048, "bf16", 16),
]
TIMED = ["f5-granite8b-bf16-adamw-b1s2048-ckpt", "f5-granite2b-ampfp16-adamw-b3s1000-acc2", "f5-phi2-bf16-adamw-b2s1024",
         "f5-phi15drop-ampbf16-adamw-b5s768-ckpt", "f5-stablelm12-bf16-adamw-b1s2048-ckpt",
         "f5-stablelm3b-ampbf16-adamw-b3s1024"]

if __name__ == "__main__":
    write_holdout(sys.argv[1], [dict(c) for c in MEMORY])
    write_holdout(sys.argv[2], [dict(c, id="ht5-" + c["id"][3:]) for c in MEMORY if c["id"] in TIMED])
