#!/usr/bin/env python3
"""Family set 74 (Jais 2, jais2: Jais2ForCausalLM), written from the installed transformers 5.17 modeling file
without a device: writes calibrate/cases/families74-input.jsonl. The widths of Jais2Config's class defaults
(models/zoo/jais2-defaults.json: hidden 3328, 26 heads of 128 (MHA), relu2 MLP 26624, vocabulary 150272, untied,
biases on q / k / v / o and up / down, nn.LayerNorm with bias; 8.09B parameters at 32 layers, the size of
inceptionai/Jais-2-8B-Chat, which the class's docstring names) cut to 4 layers. SDPA and eager; amp bf16 / bf16 /
fp32 / amp fp16 with accumulation and checkpointing, LoRA on q_proj / v_proj, generate(). Caps: two copies of the
first row under memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the
predictions).
Usage: python3 calibrate/cases/make_families74.py > calibrate/cases/families74-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 34.0, 41.0  # the uncapped f74-j2-ampbf16-b3s1000 row predicted 36056.4 MiB allocated, 41430 reserved (this commit)

J2 = {"attention_bias": True, "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 150024,
      "hidden_act": "relu2", "hidden_size": 3328, "initializer_range": 0.02, "intermediate_size": 26624,
      "layer_norm_eps": 1e-05, "max_position_embeddings": 8192, "mlp_bias": True, "num_attention_heads": 26,
      "num_hidden_layers": 4, "num_key_value_heads": 26, "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
      "tie_word_embeddings": False, "use_cache": True, "vocab_size": 150272}
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


row = functools.partial(family_row, "jais2")


FIRST = ("f74-j2-ampbf16-b3s1000", J2, "training", 3, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f74-j2-fp32-eager-b2s600", J2, "training", 2, 600, "fp32", attn="eager"),
    row("f74-j2-ampfp16-b3s700-acc2", J2, "training", 3, 700, "amp_fp16", accum=2),
    row("f74-j2-bf16-b6s1000-ckpt", J2, "training", 6, 1000, "bf16", ckpt=True),
    row("f74-j2-bf16-lora-b5s1000", J2, "training", 5, 1000, "bf16", lora=LORA),
    row("f74-j2-infer-bf16-b4s900-g16", J2, "inference", 4, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
