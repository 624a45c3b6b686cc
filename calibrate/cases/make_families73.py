#!/usr/bin/env python3
"""Family set 73 (Code World Model, cwm: CwmForCausalLM, facebook/cwm), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families73-input.jsonl. The widths of CwmConfig's class
defaults, which are the 32B checkpoint's (models/zoo/cwm-defaults.json: hidden 6144, 48 heads / 8 KV heads of 128,
SwiGLU 21504, vocabulary 128256, untied, llama3 rope), cut to 2 layers (full, sliding: the class's pattern, every
fourth layer full from layer 0) for the fp32-master rows and to 4 layers (full, then three sliding) for the 16-bit
ones. Two windows: the class's 8192 (no sliding mask at these lengths: the window covers the sequence) and 256 (SW:
the sliding mask materialised, SDPA with a bool mask and repeat_kv's copies, eager's two float masks). CwmModel builds
both masks every forward whatever the layer types. SDPA and eager; amp bf16 / bf16 / fp32 / amp fp16 with
accumulation and checkpointing, LoRA on q_proj / v_proj, generate(). Caps: two copies of the first row under
memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the predictions).
Usage: python3 calibrate/cases/make_families73.py > calibrate/cases/families73-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 46.0, 50.5  # the uncapped f73-cwm-ampbf16-b3s700 row predicted 48605.8 MiB allocated, 51130 reserved (this commit)

CWM = {"attention_dropout": 0.0, "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009], "head_dim": 128,
       "hidden_act": "silu", "hidden_size": 6144, "initializer_range": 0.02, "intermediate_size": 21504,
       "max_position_embeddings": 131072, "mlp_bias": False, "num_attention_heads": 48, "num_hidden_layers": 2,
       "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
       "rope_parameters": {"rope_theta": 1000000.0, "factor": 16.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                           "original_max_position_embeddings": 8192, "rope_type": "llama3"},
       "sliding_window": 8192, "tie_word_embeddings": False, "use_cache": True, "vocab_size": 128256}
CWM4 = dict(CWM, num_hidden_layers=4)
SW2 = dict(CWM, sliding_window=256)
SW4 = dict(CWM4, sliding_window=256)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


row = functools.partial(family_row, "cwm")


FIRST = ("f73-cwm-ampbf16-b3s700", CWM, "training", 3, 700, "amp_bf16")
rows = [
    row(*FIRST),
    row("f73-cwm-sw256-fp32-eager-b1s600", SW2, "training", 1, 600, "fp32", attn="eager"),
    row("f73-cwm-sw256-ampfp16-b2s700-acc2", SW2, "training", 2, 700, "amp_fp16", accum=2),
    row("f73-cwm4-bf16-b5s1000-ckpt", CWM4, "training", 5, 1000, "bf16", ckpt=True),
    row("f73-cwm4-sw256-bf16-lora-b3s1000", SW4, "training", 3, 1000, "bf16", lora=LORA),
    row("f73-cwm4-sw256-infer-bf16-b4s900-g16", SW4, "inference", 4, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
