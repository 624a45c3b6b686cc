#!/usr/bin/env python3
"""Family set 70 (Laguna, laguna: LagunaForCausalLM), written from the installed transformers 5.17 modeling file
without a device: writes calibrate/cases/families70-input.jsonl. No published config.json was found (models/zoo/
README.md, laguna-defaults): the widths are LagunaConfig's class defaults (hidden 2048, 48 heads of 128 over 8 KV
heads, dense intermediate 8192, experts of 512 top 8 plus a shared expert of 512, vocabulary 100352, window 512) cut
to 4 layers (full / sliding / sliding / full, dense then sparse) and 32 routed experts (of 256), with per-layer query
heads 48 / 64 / 64 / 48 and moe_routed_scaling_factor 2.5 as a third-party fixture of a Laguna XS checkpoint gives
them (no tensor changes size with the factor). SDPA and eager; amp bf16 / fp32 eager / amp fp16 with accumulation
(per-element gates and a router logit softcap) / bf16 checkpointed / LoRA on q / k / v / o / g_proj (peft 0.21 has
no default target for laguna) / generate() from a prompt past the window. Caps: two copies of the first row under
memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families70.py > calibrate/cases/families70-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 18.0, 21.0  # the uncapped f70-lagunas-ampbf16-b3s1000 row predicted 18795.1 MiB allocated, 20950 reserved (this commit)

S = {"vocab_size": 100352, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 4,
     "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu",
     "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "tie_word_embeddings": False,
     "sliding_window": 512, "attention_dropout": 0.0, "attention_bias": False,
     "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "num_experts_per_tok": 8,
     "num_experts": 32, "gating": "per-head", "moe_routed_scaling_factor": 2.5,
     "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "full_attention"],
     "mlp_layer_types": ["dense", "sparse", "sparse", "sparse"],
     "num_attention_heads_per_layer": [48, 64, 64, 48], "use_cache": True}
S_ELEM = dict(S, gating="per-element", moe_router_logit_softcapping=30.0)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "g_proj"]}


row = functools.partial(family_row, "laguna")


FIRST = ("f70-lagunas-ampbf16-b3s1000", S, "training", 3, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f70-lagunas-fp32-eager-b1s700", S, "training", 1, 700, "fp32", attn="eager"),
    row("f70-lagunas-elem-ampfp16-b2s700-acc2", S_ELEM, "training", 2, 700, "amp_fp16", accum=2),
    row("f70-lagunas-bf16-ckpt-b5s1000", S, "training", 5, 1000, "bf16", ckpt=True),
    row("f70-lagunas-bf16-lora-b3s700", S, "training", 3, 700, "bf16", lora=LORA),
    row("f70-lagunas-infer-bf16-b3s600-g16", S, "inference", 3, 600, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
