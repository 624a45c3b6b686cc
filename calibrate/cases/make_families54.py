#!/usr/bin/env python3
"""Family set 54 (NanoChat, nanochat: NanoChatForCausalLM), written from the installed transformers 5.17 modeling file
without a device: writes calibrate/cases/families54-input.jsonl. Widths follow nanochat's published checkpoints
(nanochat's scaling rule model_dim = depth x 64, head_dim 128; vocabulary 65,536, max_position_embeddings 2048,
intermediate 4 x hidden, relu2, rms_norm_eps 1e-6, final_logit_softcapping 15.0, untied lm_head, no biases):
  d20: hidden 1280, 20 layers of 10 heads (nanochat-students/nanochat-d20; full depth here);
  d32: hidden 2048, 32 layers of 16 heads (karpathy/nanochat-d32; 8 of its layers here).
SDPA (the default) and eager; amp bf16 / bf16 / fp32 / amp fp16 with accumulation, checkpointing, grouped KV heads
(d20's widths with 5 KV heads, eager: repeat_kv's copies), LoRA on the attention projections and fc1 / fc2 (peft
0.21 has no default target for nanochat), generation. Caps: two copies of the first row under memory_cap_gib near
its predicted peak (set from the prediction at the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families54.py > calibrate/cases/families54-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 15.9, 19.8  # the uncapped f54-d20-ampbf16-b4s1000 row predicted 17280.4 MiB allocated, 19584 reserved (this commit)

BASE = {"attention_bias": False, "attention_dropout": 0.0, "final_logit_softcapping": 15.0, "hidden_act": "relu2",
        "hidden_size": 1280, "initializer_range": 0.02, "intermediate_size": 5120, "max_position_embeddings": 2048,
        "num_attention_heads": 10, "num_hidden_layers": 20, "num_key_value_heads": 10, "rms_norm_eps": 1e-06,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "tie_word_embeddings": False,
        "use_cache": True, "vocab_size": 65536}
D20 = BASE
D20GQA = dict(BASE, num_key_value_heads=5)
D32X8 = dict(BASE, hidden_size=2048, intermediate_size=8192, num_attention_heads=16, num_key_value_heads=16,
             num_hidden_layers=8)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "fc1", "fc2"]}


row = functools.partial(family_row, "nanochat")


FIRST = ("f54-d20-ampbf16-b4s1000", D20, "training", 4, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f54-d20-bf16-b5s777", D20, "training", 5, 777, "bf16"),
    row("f54-d20-fp32-eager-b3s300", D20, "training", 3, 300, "fp32", attn="eager"),
    row("f54-d32x8-bf16-b3s700-ckpt", D32X8, "training", 3, 700, "bf16", ckpt=True),
    row("f54-d20-ampfp16-b6s600-acc2", D20, "training", 6, 600, "amp_fp16", accum=2),
    row("f54-d32x8-bf16-lora-b4s1000", D32X8, "training", 4, 1000, "bf16", lora=LORA),
    row("f54-d20gqa-bf16-eager-b2s1000", D20GQA, "training", 2, 1000, "bf16", attn="eager"),
    row("f54-d20-infer-bf16-b5s700-g16", D20, "inference", 5, 700, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
