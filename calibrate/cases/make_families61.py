#!/usr/bin/env python3
"""Family set 61 (Ministral, ministral: MinistralForCausalLM, Ministral-8B-Instruct-2410), written from the installed
transformers 5.17 modeling file without a device: writes calibrate/cases/families61-input.jsonl. The published
widths (models/zoo/ministral-8b-instruct-2410.json: hidden 4096, 32 heads / 8 KV heads of 128, SwiGLU 12288,
vocabulary 131072, untied, rope_theta 1e8) cut to 4 layers with the published layer pattern (one full-attention
layer, then three sliding ones). Two windows: the published 32768 (no sliding mask at these lengths: the window
covers the sequence, as in the checkpoint's own use below 32k tokens) and 512 (SW: the sliding mask materialised,
SDPA with a bool mask and repeat_kv's copies, eager's two float masks). MinistralModel builds both masks every
forward whatever the layer types. SDPA and eager; amp bf16 / bf16 / fp32 / amp fp16 with accumulation and
checkpointing, LoRA on q_proj / v_proj, generate(). Caps: two copies of the first row under memory_cap_gib near its
predicted peak (set from the prediction at the commit that adds the predictions).
Usage: python3 calibrate/cases/make_families61.py > calibrate/cases/families61-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 33.5, 40.0  # the uncapped f61-m8b-ampbf16-b4s1000 row predicted 35265.1 MiB allocated, 40300 reserved (this commit)

M8B = {"attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2, "head_dim": 128, "hidden_act": "silu",
       "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 12288,
       "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "sliding_attention"],
       "max_position_embeddings": 32768, "num_attention_heads": 32, "num_hidden_layers": 4, "num_key_value_heads": 8,
       "rms_norm_eps": 1e-05, "rope_theta": 100000000.0, "sliding_window": 32768, "tie_word_embeddings": False,
       "use_cache": True, "vocab_size": 131072}
SW = dict(M8B, sliding_window=512)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


row = functools.partial(family_row, "ministral")


FIRST = ("f61-m8b-ampbf16-b4s1000", M8B, "training", 4, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f61-m8b-sw512-fp32-eager-b2s600", SW, "training", 2, 600, "fp32", attn="eager"),
    row("f61-m8b-sw512-ampfp16-b3s700-acc2", SW, "training", 3, 700, "amp_fp16", accum=2),
    row("f61-m8b-bf16-b6s1000-ckpt", M8B, "training", 6, 1000, "bf16", ckpt=True),
    row("f61-m8b-sw512-bf16-lora-b5s1000", SW, "training", 5, 1000, "bf16", lora=LORA),
    row("f61-m8b-sw512-infer-bf16-b4s900-g16", SW, "inference", 4, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
