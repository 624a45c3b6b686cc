#!/usr/bin/env python3
"""Family set 6 (2026-12-02): held out for cohere, predicted at a named commit before it is measured (family set 4's
three cohere rows are what the builder was written against; their 256k vocabulary dominated them, so these use
smaller vocabularies and longer sequences, where the Python LayerNorm, the fp32 rotary and the q/k norms decide).
Usage: python3 make_families6.py MEMORY.jsonl TIMING.jsonl"""
import sys

from case_helpers import hf, inference, training, write_holdout

tr = training
COHERE_QK = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 2, "num_attention_heads": 32,
             "num_key_value_heads": 8, "vocab_size": 32000, "use_qk_norm": True, "logit_scale": 0.125}
COHERE_BIAS = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 3, "num_attention_heads": 16,
               "num_key_value_heads": 16, "vocab_size": 64000, "attention_bias": True, "tie_word_embeddings": False}

MEMORY = [
    tr("f6-cohere-qk-bf16-adamw-b2s2048", hf("cohere", COHERE_QK), 2, 2048, "bf16", "adamw"),
    tr("f6-cohere-qk-ampbf16-adamw-b4s1024-ckpt", hf("cohere", COHERE_QK), 4, 1024, "amp_bf16", "adamw", ckpt=True),
    tr("f6-cohere-bias-fp32-sgdmom-b2s512-eager", hf("cohere", COHERE_BIAS, "eager"), 2, 512, "fp32", "sgd_momentum"),
    tr("f6-cohere-bias-ampfp16-adamw-b3s1000", hf("cohere", COHERE_BIAS), 3, 1000, "amp_fp16", "adamw"),
    inference("f6-cohere-qk-infer-bf16-b4s1500-g16", hf("cohere", COHERE_QK), 4, 1500, "bf16", 16),
]
TIMED = ["f6-cohere-qk-bf16-adamw-b2s2048", "f6-cohere-qk-ampbf16-adamw-b4s1024-ckpt",
         "f6-cohere-bias-ampfp16-adamw-b3s1000"]

if __name__ == "__main__":
    write_holdout(sys.argv[1], [dict(c) for c in MEMORY])
    write_holdout(sys.argv[2], [dict(c, id="ht6-" + c["id"][3:]) for c in MEMORY if c["id"] in TIMED])
