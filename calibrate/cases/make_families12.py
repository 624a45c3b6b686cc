#!/usr/bin/env python3
"""Family set 12 (2026-12-03, twelfth session): the held-out set of family set 11's modelled families (ernie4_5,
exaone4, seed_oss, arcee, modernbert) on other widths, batch shapes and options than the tuning rows: fp32 eager,
amp fp16 with accumulation, checkpointing, generation of 16 tokens past EXAONE's sliding window, ModernBERT-large
and a ModernBERT sequence longer than its local window. Predicted at a named commit before it is measured
(data/validation/predictions/families12-holdout.json); two training rows also timed (held-out step-time set 19).
Usage: python3 make_families12.py families12-holdout-input.jsonl timing19-holdout-input.jsonl"""
import sys

from case_helpers import hf, inference, training, write_holdout

tr = training
ERNIE3 = {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 3, "num_attention_heads": 16,
          "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 103424, "tie_word_embeddings": True}
ERNIE4_UNTIED = dict(ERNIE3, num_hidden_layers=4, tie_word_embeddings=False)
EXAONE = {"hidden_size": 2048, "intermediate_size": 4096, "num_hidden_layers": 4, "num_attention_heads": 32,
          "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 102400, "tie_word_embeddings": True}
EXAONE_WIN = dict(EXAONE, sliding_window=1024)
SEED = {"hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 1, "num_attention_heads": 80,
        "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 155136}
ARCEE3 = {"hidden_size": 2560, "intermediate_size": 18432, "num_hidden_layers": 3, "num_attention_heads": 20,
          "num_key_value_heads": 4, "vocab_size": 128004}
MODERNBERT = {"hidden_size": 768, "intermediate_size": 1152, "num_hidden_layers": 6, "num_attention_heads": 12,
              "vocab_size": 50368}
MODERNBERT_L = {"hidden_size": 1024, "intermediate_size": 2624, "num_hidden_layers": 4, "num_attention_heads": 16,
                "vocab_size": 50368}

CASES = [
    tr("f12-ernie-fp32-adamw-b2s500-eager", hf("ernie4_5", ERNIE3, "eager"), 2, 500, "fp32", "adamw"),
    tr("f12-ernie-untied-ampfp16-adamw-b6s1000-acc2", hf("ernie4_5", ERNIE4_UNTIED), 6, 1000, "amp_fp16", "adamw",
       accum=2),
    tr("f12-exaone-ampbf16-adamw-b3s1000-ckpt", hf("exaone4", EXAONE), 3, 1000, "amp_bf16", "adamw", ckpt=True),
    inference("f12-exaone-win1024-infer-bf16-b2s1500-g16", hf("exaone4", EXAONE_WIN), 2, 1500, "bf16", 16),
    inference("f12-seed-infer-bf16-b2s1024-g16", hf("seed_oss", SEED), 2, 1024, "bf16", 16),
    tr("f12-seed-ampbf16-adamw-b1s1024", hf("seed_oss", SEED), 1, 1024, "amp_bf16", "adamw"),
    tr("f12-arcee-bf16-adamw-b3s1000-ckpt", hf("arcee", ARCEE3), 3, 1000, "bf16", "adamw", ckpt=True),
    tr("f12-modernbert-ampfp16-adamw-b12s500", hf("modernbert", MODERNBERT), 12, 500, "amp_fp16", "adamw"),
    tr("f12-modernbert-large-fp32-adamw-b4s1024", hf("modernbert", MODERNBERT_L), 4, 1024, "fp32", "adamw"),
    tr("f12-modernbert-bf16-adamw-b6s2000-eager", hf("modernbert", MODERNBERT, "eager"), 6, 2000, "bf16", "adamw"),
]
TIMED = ["f12-exaone-ampbf16-adamw-b3s1000-ckpt", "f12-modernbert-ampfp16-adamw-b12s500"]

if __name__ == "__main__":
    write_holdout(sys.argv[1], [dict(c) for c in CASES])
    write_holdout(sys.argv[2], [dict(c, id="ht19-" + c["id"][4:]) for c in CASES if c["id"] in TIMED])
