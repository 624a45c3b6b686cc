#!/usr/bin/env python3
"""Family set 62 (Granite SWA, granite_swa: GraniteSWAForCausalLM), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families62-input.jsonl. No published config.json was found
(models/zoo/README.md, granite-swa-defaults): the widths are GraniteSWAConfig's class defaults (hidden 2560, 20 heads and
4 KV heads of 128, intermediate 8192, vocabulary 100352, tied lm_head, sliding_window 128 with the default
layer_types: layer 0 full, 1 .. 3 sliding) cut to 4 layers, with Granite-3-style multipliers (Python floats: no
tensor changes size). Eager only (_supports_sdpa is False); amp bf16 / fp32 / amp fp16 with accumulation (that row
also sets layer_rope_theta with a NoPE layer and two rotary tables) / bf16 checkpointed / LoRA on q_proj, v_proj
(peft 0.21 has no default target for granite_swa) / generate() from a prompt past the window. Caps: two copies of
the first row under memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the
predictions, then frozen).
Usage: python3 calibrate/cases/make_families62.py > calibrate/cases/families62-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 11.5, 14.0  # the uncapped f62-gswa-ampbf16-b3s700 row predicted 12554.3 MiB allocated, 13894 reserved (this commit)

LAYERS = 4
GSWA = {"attention_bias": False, "attention_dropout": 0.0, "attention_multiplier": 0.0078125,
        "embedding_multiplier": 12.0, "hidden_act": "silu", "hidden_size": 2560, "intermediate_size": 8192,
        "logits_scaling": 8.0, "max_position_embeddings": 8192, "mlp_bias": False, "num_attention_heads": 20,
        "num_hidden_layers": LAYERS, "num_key_value_heads": 4, "residual_multiplier": 0.22, "rms_norm_eps": 1e-05,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "sliding_window": 128,
        "tie_word_embeddings": True, "use_cache": True, "vocab_size": 100352}
GSWA_THETAS = dict(GSWA, layer_rope_theta=[10000.0, 0, 500000.0, 10000.0])  # layer 1 NoPE, two rotary tables
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


row = functools.partial(family_row, "granite_swa", attn="eager")


FIRST = ("f62-gswa-ampbf16-b3s700", GSWA, "training", 3, 700, "amp_bf16")
rows = [
    row(*FIRST),
    row("f62-gswa-fp32-b3s300", GSWA, "training", 3, 300, "fp32"),
    row("f62-gswa-thetas-ampfp16-b5s600-acc2", GSWA_THETAS, "training", 5, 600, "amp_fp16", accum=2),
    row("f62-gswa-bf16-b6s1000-ckpt", GSWA, "training", 6, 1000, "bf16", ckpt=True),
    row("f62-gswa-bf16-lora-b5s700", GSWA, "training", 5, 700, "bf16", lora=LORA),
    row("f62-gswa-infer-bf16-b5s900-g16", GSWA, "inference", 5, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
