#!/usr/bin/env python3
"""Family set 55 (VaultGemma, vaultgemma: VaultGemmaForCausalLM), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families55-input.jsonl. Widths follow google/vaultgemma-1b
(hidden 1152, 26 layers of 4 heads and 4 KV heads of 256, intermediate 6912, vocabulary 256000, gelu_pytorch_tanh,
query_pre_attn_scalar 256, max_position_embeddings 1024, sliding_window 512 with every layer full attention, final /
attention logit softcapping 30 / 50, tied lm_head); full depth in every row. SDPA and eager; amp bf16 / bf16 / fp32 /
amp fp16 with accumulation, checkpointing, the class's default alternating layer_types (sliding layers with a
masked SDPA: the config without layer_types), LoRA on q_proj / v_proj (peft 0.21 has no default target for
vaultgemma), generation. Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from the
prediction at the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families55.py > calibrate/cases/families55-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 24.5, 31.2  # the uncapped f55-vg1b-ampbf16-b3s700 row predicted 26081.1 MiB allocated, 31338 reserved (this commit)

VG1B = {"attention_bias": False, "attention_dropout": 0.0, "attn_logit_softcapping": 50.0,
        "final_logit_softcapping": 30.0, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": 1152, "initializer_range": 0.02, "intermediate_size": 6912,
        "layer_types": ["full_attention"] * 26, "max_position_embeddings": 1024, "num_attention_heads": 4,
        "num_hidden_layers": 26, "num_key_value_heads": 4, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "sliding_window": 512,
        "tie_word_embeddings": True, "use_cache": True, "vocab_size": 256000}
VG1B_ALT = {k: v for k, v in VG1B.items() if k != "layer_types"}  # the class default: even layers slide
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


row = functools.partial(family_row, "vaultgemma")


FIRST = ("f55-vg1b-ampbf16-b3s700", VG1B, "training", 3, 700, "amp_bf16")
rows = [
    row(*FIRST),
    row("f55-vg1b-alt-bf16-b4s800", VG1B_ALT, "training", 4, 800, "bf16"),
    row("f55-vg1b-fp32-eager-b2s300", VG1B, "training", 2, 300, "fp32", attn="eager"),
    row("f55-vg1b-bf16-eager-b2s1000", VG1B, "training", 2, 1000, "bf16", attn="eager"),
    row("f55-vg1b-ampfp16-b3s600-acc2", VG1B, "training", 3, 600, "amp_fp16", accum=2),
    row("f55-vg1b-bf16-b5s1000-ckpt", VG1B, "training", 5, 1000, "bf16", ckpt=True),
    row("f55-vg1b-bf16-lora-b4s1000", VG1B, "training", 4, 1000, "bf16", lora=LORA),
    row("f55-vg1b-infer-bf16-b4s900-g16", VG1B, "inference", 4, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
