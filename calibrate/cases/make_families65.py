#!/usr/bin/env python3
"""Family set 65 (Solar Open, solar_open: SolarOpenForCausalLM), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families65-input.jsonl. Two cuts of the published
upstage/Solar-Open-100B config.json (models/zoo/solar-open-100b.json):
  P (published widths): hidden 4096, 64 heads x 128 over 8 KV heads, moe_intermediate 1280, vocabulary 196608,
     8 routed experts per token + 1 shared, routed_scaling_factor 1.0, yarn rope (factor 2); cut to 2 layers and
     32 routed experts (of 128);
  S (scaled body, the published head layout): hidden 2048, 32 heads x 128 over 4 KV heads, moe_intermediate 640,
     4 layers of 32 experts (8 per token, 1 shared), vocabulary 196608.
Every layer is SolarOpenMoE (no dense layers). SDPA and eager; amp bf16 / fp32 / amp fp16 with accumulation / bf16
checkpointed / LoRA on q / k / v / o (peft has no solar_open mapping), and one generate(). Caps: two copies of the
first row under memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the
predictions, then frozen).
Usage: python3 calibrate/cases/make_families65.py > calibrate/cases/families65-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 25.4, 34.4  # the uncapped f65-solars-ampbf16-b3s1000 row predicted 27227.9 MiB allocated, 34280 reserved (this commit)

BASE = {"vocab_size": 196608, "hidden_size": 4096, "moe_intermediate_size": 1280, "num_hidden_layers": 2,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "n_routed_experts": 32,
        "n_shared_experts": 1, "num_experts_per_tok": 8, "n_group": 1, "topk_group": 1, "norm_topk_prob": True,
        "routed_scaling_factor": 1.0, "hidden_act": "silu", "rms_norm_eps": 1e-05, "partial_rotary_factor": 1.0,
        "rope_theta": 1000000, "rope_scaling": {"type": "yarn", "factor": 2.0, "original_max_position_embeddings": 65536},
        "max_position_embeddings": 131072, "tie_word_embeddings": False, "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2, "use_cache": True}
P = BASE
S = dict(BASE, hidden_size=2048, num_attention_heads=32, num_key_value_heads=4, moe_intermediate_size=640,
         num_hidden_layers=4)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}


row = functools.partial(family_row, "solar_open")


FIRST = ("f65-solars-ampbf16-b3s1000", S, "training", 3, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f65-solars-fp32-eager-b1s700", S, "training", 1, 700, "fp32", attn="eager"),
    row("f65-solars-ampfp16-b2s700-acc2", S, "training", 2, 700, "amp_fp16", accum=2),
    row("f65-solars-bf16-ckpt-b5s1000", S, "training", 5, 1000, "bf16", ckpt=True),
    row("f65-solarp-bf16-lora-b3s700", P, "training", 3, 700, "bf16", lora=LORA),
    row("f65-solarp-infer-bf16-b3s300-g16", P, "inference", 3, 300, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
