#!/usr/bin/env python3
"""Family set 75 (HyperCLOVA X, hyperclovax: HyperCLOVAXForCausalLM), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families75-input.jsonl. The widths of HyperCLOVAXConfig's
class defaults (GraniteConfig's: hidden 4096, 32 heads of 128 (MHA), SwiGLU 11008, vocabulary 32000, untied;
models/zoo/hyperclovax-defaults.json) cut to 4 layers, with muP multipliers other than 1.0 (embedding 10.0, residual
0.5, logits 0.125, attention 1/128: Python floats, each a statement) and peri-LN (use_post_norm True, the class
default: RMSNorms after the attention and after the MLP); one checkpointed row with use_post_norm False (nn.Identity:
Granite's layer). SDPA and eager; amp bf16 / bf16 / fp32 / amp fp16 with accumulation and checkpointing, LoRA on
q_proj / v_proj, generate(). Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from
the prediction at the commit that adds the predictions).
Usage: python3 calibrate/cases/make_families75.py > calibrate/cases/families75-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 19.0, 23.8  # the uncapped f75-hcx-ampbf16-b4s1000 row predicted 20505.3 MiB allocated, 23790 reserved (this commit)

HCX = {"attention_bias": False, "attention_dropout": 0.0, "attention_multiplier": 0.0078125, "bos_token_id": 1,
       "embedding_multiplier": 10.0, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096,
       "initializer_range": 0.02, "intermediate_size": 11008, "logits_scaling": 0.125, "max_position_embeddings": 4096,
       "mlp_bias": False, "num_attention_heads": 32, "num_hidden_layers": 4, "num_key_value_heads": 32,
       "residual_multiplier": 0.5, "rms_norm_eps": 1e-06,
       "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "tie_word_embeddings": False,
       "use_cache": True, "use_post_norm": True, "vocab_size": 32000}
NOPOST = dict(HCX, use_post_norm=False)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


row = functools.partial(family_row, "hyperclovax")


FIRST = ("f75-hcx-ampbf16-b4s1000", HCX, "training", 4, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f75-hcx-fp32-eager-b2s700", HCX, "training", 2, 700, "fp32", attn="eager"),
    row("f75-hcx-ampfp16-b3s700-acc2", HCX, "training", 3, 700, "amp_fp16", accum=2),
    row("f75-hcx-nopost-bf16-b6s1000-ckpt", NOPOST, "training", 6, 1000, "bf16", ckpt=True),
    row("f75-hcx-bf16-lora-b5s1000", HCX, "training", 5, 1000, "bf16", lora=LORA),
    row("f75-hcx-infer-bf16-b5s700-g16", HCX, "inference", 5, 700, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
