#!/usr/bin/env python3
"""Family set 63 (Granite MoE SWA, granitemoe_swa: GraniteMoeSWAForCausalLM), written from the installed
transformers 5.17 modeling file without a device: writes calibrate/cases/families63-input.jsonl. No published
config.json was found (models/zoo/README.md, granitemoe-swa-defaults): five rows take the published
granite-3.0-3b-a800m MoE widths (granitemoe: hidden 1536, 24 heads and 8 KV heads of 64, 40 experts of 512, top 8,
vocabulary 49155, tied, its multipliers) with GraniteMoeSWAConfig's sliding window 128 and default layer_types
(layer 0 full, 1 .. 3 sliding), cut to 4 layers, two of them with a shared MLP (shared_intermediate_size 1024);
one row takes the class defaults (hidden 4096, 32 heads, 8 experts of 11008, top 2, vocabulary 32000, untied) cut
to 2 layers. Eager only (_supports_sdpa is False); amp bf16 / bf16 / fp32 / amp fp16 with accumulation / bf16
checkpointed / generate() from a prompt past the window. Caps: two copies of the first row under memory_cap_gib near
its predicted peak (set from the prediction at the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families63.py > calibrate/cases/families63-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 9.2, 12.5  # the uncapped f63-gmswa-ampbf16-b3s700 row predicted 10036.8 MiB allocated, 12396 reserved (this commit)

GMSWA = {"attention_bias": False, "attention_dropout": 0.0, "attention_multiplier": 0.015625,
         "embedding_multiplier": 12.0, "hidden_act": "silu", "hidden_size": 1536, "intermediate_size": 512,
         "logits_scaling": 6.0, "max_position_embeddings": 4096, "num_attention_heads": 24, "num_experts_per_tok": 8,
         "num_hidden_layers": 4, "num_key_value_heads": 8, "num_local_experts": 40, "output_router_logits": False,
         "residual_multiplier": 0.22, "rms_norm_eps": 1e-06,
         "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"}, "router_aux_loss_coef": 0.0,
         "sliding_window": 128, "tie_word_embeddings": True, "use_cache": True, "vocab_size": 49155}
GMSWA_SHARED = dict(GMSWA, shared_intermediate_size=1024)
DEFAULTS_2L = {"num_hidden_layers": 2}  # every other key GraniteMoeSWAConfig's default


row = functools.partial(family_row, "granitemoe_swa", attn="eager")


FIRST = ("f63-gmswa-ampbf16-b3s700", GMSWA, "training", 3, 700, "amp_bf16")
rows = [
    row(*FIRST),
    row("f63-gmswa-shared-bf16-b5s1000", GMSWA_SHARED, "training", 5, 1000, "bf16"),
    row("f63-gmswa-fp32-b3s300", GMSWA, "training", 3, 300, "fp32"),
    row("f63-gmswa-ampfp16-b6s600-acc2", GMSWA, "training", 6, 600, "amp_fp16", accum=2),
    row("f63-gmswa-defaults-bf16-b3s300-ckpt", DEFAULTS_2L, "training", 3, 300, "bf16", ckpt=True),
    row("f63-gmswa-shared-infer-bf16-b5s900-g16", GMSWA_SHARED, "inference", 5, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
