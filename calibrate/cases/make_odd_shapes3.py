#!/usr/bin/env python3
"""Odd shapes, set 3 (2026-12-04, twenty-first session, issue 17 part 1): HELD OUT, predicted at a named commit
before measuring. Set 2's kinds of shape (odd batches, lengths and vocabularies, generation, accumulation under
GradScaler, checkpointing) on the families the guide lists as once refused and since modelled: Qwen3, Gemma 3,
Phi-3, OLMo-2, GPT-NeoX, and GPT-2 medium, each cut to a few layers where a CPU build would take long. Four capped
copies (at 0.97x and 1.03x of the predicted reserved peak) test the verdict. Cases carry neither `load` nor
`generate_first`: they run with the defaults.
Usage: python3 make_odd_shapes3.py > odd-shapes3-input.jsonl"""
import json

from case_helpers import capped, hf, inference, training

tr = training
QWEN3_06 = {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 6, "num_attention_heads": 16,
            "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": True,
            "max_position_embeddings": 40960}
GEMMA3_1B = {"hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 7, "num_attention_heads": 4,
             "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 262144, "sliding_window": 512,
             "max_position_embeddings": 32768}
PHI3_4L = {"hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 4, "num_attention_heads": 32,
           "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 4096}
OLMO2_4L = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 4, "num_attention_heads": 16,
            "num_key_value_heads": 16, "vocab_size": 100352, "max_position_embeddings": 4096}
NEOX_410 = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 8, "num_attention_heads": 16,
            "vocab_size": 50304, "rotary_pct": 0.25, "max_position_embeddings": 2048}
GPT2M = {"n_embd": 1024, "n_layer": 24, "n_head": 16, "vocab_size": 50257, "n_positions": 1024}

CASES = [
    tr("odd3-qwen3-06-ampbf16-adamw-b7s1000", hf("qwen3", QWEN3_06), 7, 1000, "amp_bf16", "adamw"),
    tr("odd3-gemma3-1b7l-bf16-adamw-b3s1500-ckpt", hf("gemma3_text", GEMMA3_1B), 3, 1500, "bf16", "adamw", ckpt=True),
    tr("odd3-phi3-4l-ampfp16-adamw-b5s700-a2", hf("phi3", PHI3_4L), 5, 700, "amp_fp16", "adamw", accum=2),
    tr("odd3-olmo2-4l-bf16-adamw-b6s1024", hf("olmo2", OLMO2_4L), 6, 1024, "bf16", "adamw"),
    tr("odd3-neox410-fp32-adamw-b10s500", hf("gpt_neox", NEOX_410), 10, 500, "fp32", "adamw"),
    tr("odd3-gpt2m-ampbf16-adamw-b6s1024", hf("gpt2", GPT2M), 6, 1024, "amp_bf16", "adamw"),
    tr("odd3-olmo2-4l-ampbf16-sgdmom-b12s300", hf("olmo2", OLMO2_4L), 12, 300, "amp_bf16", "sgd_momentum"),
    tr("odd3-gpt2m-fp32-adamw-b3s1000-ckpt", hf("gpt2", GPT2M), 3, 1000, "fp32", "adamw", ckpt=True),
    inference("odd3-qwen3-06-infer-bf16-b5s1000-g24", hf("qwen3", QWEN3_06), 5, 1000, "bf16", 24),
    inference("odd3-gemma3-1b7l-infer-bf16-b12s300-g10", hf("gemma3_text", GEMMA3_1B), 12, 300, "bf16", 10),
    inference("odd3-phi3-4l-infer-bf16-b3s2500-g16", hf("phi3", PHI3_4L), 3, 2500, "bf16", 16),
    inference("odd3-neox410-infer-bf16-b24s100-g30", hf("gpt_neox", NEOX_410), 24, 100, "bf16", 30),
]
# Capped copies: the predicted reserved peaks (MiB) at the commit that wrote the predictions, each cap 3 % under
# or over it (a margin inside the band is BORDERLINE; outside, the verdict must match what the GPU does).
CAPS = {"odd3-qwen3-06-ampbf16-adamw-b7s1000": None, "odd3-gpt2m-ampbf16-adamw-b6s1024": None}

if __name__ == "__main__":
    import sys
    rsv = dict(a.split("=") for a in sys.argv[1:])  # ID=PREDICTED_RESERVED_MIB for the capped copies
    out = list(CASES)
    for c in CASES:
        if c["id"] in CAPS and c["id"] in rsv:
            out.append(capped(c, float(rsv[c["id"]]), 0.97, "cap"))
            out.append(capped(c, float(rsv[c["id"]]), 1.03, "cap"))
    for c in out:
        c["holdout"] = True
        print(json.dumps(c))
