#!/usr/bin/env python3
"""Family set 47 (BioGPT, biogpt: BioGptForCausalLM), written from the code index's modular file without a device:
writes calibrate/cases/families47-input.jsonl. Widths follow microsoft/biogpt (1024 x 24 layers of 16 heads, FFN
4096, vocabulary 42384, 1024 positions) and microsoft/BioGPT-Large (1600 x 48 layers of 25 heads, FFN 6400,
vocabulary 57717, 2048 positions; 12 of its layers here). The config's own dropouts (0.1) stay on, as the harness
trains. SDPA and eager, fp32 / bf16 / amp, checkpointing, accumulation, generation. Caps: two copies of the first row
under memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the predictions, then
frozen).
Usage: python3 calibrate/cases/make_families47.py > calibrate/cases/families47-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 15.9, 17.4  # the uncapped f47-biogpt-ampbf16-b8s1024 row predicted 16801.3 MiB allocated, 17534 reserved (this commit)

BASE = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "activation_dropout": 0.0, "max_position_embeddings": 1024, "vocab_size": 42384, "layer_norm_eps": 1e-12,
        "scale_embedding": True, "layerdrop": 0.0, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
        "initializer_range": 0.02}
LARGE12 = dict(BASE, hidden_size=1600, num_hidden_layers=12, num_attention_heads=25, intermediate_size=6400,
               max_position_embeddings=2048, vocab_size=57717)


row = functools.partial(family_row, "biogpt")


FIRST = ("f47-biogpt-ampbf16-b8s1024", BASE, "training", 8, 1024, "amp_bf16")
rows = [
    row(*FIRST),
    row("f47-biogpt-bf16-b12s700-eager", BASE, "training", 12, 700, "bf16", attn="eager"),
    row("f47-biogpt-fp32-b4s1024", BASE, "training", 4, 1024, "fp32"),
    row("f47-biogptl12-bf16-b6s1000-ckpt", LARGE12, "training", 6, 1000, "bf16", ckpt=True),
    row("f47-biogpt-ampfp16-b6s512-acc2", BASE, "training", 6, 512, "amp_fp16", accum=2),
    row("f47-biogpt-infer-bf16-b8s512-g16", BASE, "inference", 8, 512, "bf16", gen=16),
    row("f47-biogpt-infer-fp32-b4s300-g8-eager", BASE, "inference", 4, 300, "fp32", attn="eager", gen=8),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
