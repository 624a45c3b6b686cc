#!/usr/bin/env python3
"""Family set 50 (CodeGen, codegen: CodeGenForCausalLM), written from the installed transformers 5.17 modeling file
without a device: writes calibrate/cases/families50-input.jsonl. Widths follow the Salesforce/codegen-*-mono
config.json files (vocabulary 51200, n_positions / n_ctx 2048, gelu_new, dropouts 0, untied lm_head with bias):
  350M: n_embd 1024, 20 layers of 16 heads, rotary_dim 32 (full depth here);
  2B:   n_embd 2560, 32 layers of 32 heads, rotary_dim 64 (8 of its layers here);
  6B:   n_embd 4096, 33 layers of 16 heads (head size 256), rotary_dim 64 (4 of its layers here).
Eager attention in every row (CodeGen has no SDPA path; from_config refuses "sdpa"): amp bf16 / bf16 / fp32 /
amp fp16 with accumulation, checkpointing, LoRA on the fused qkv_proj and out_proj (CodeGen has no q_proj / v_proj),
generation. Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from the prediction
at the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families50.py > calibrate/cases/families50-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 35.9, 38.9  # the uncapped f50-cg350m-ampbf16-b8s1024 row predicted 37751.6 MiB allocated, 39226 reserved (this commit)

BASE = {"activation_function": "gelu_new", "attn_pdrop": 0.0, "bos_token_id": 1, "embd_pdrop": 0.0,
        "eos_token_id": 50256, "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "n_ctx": 2048, "n_embd": 1024,
        "n_head": 16, "n_inner": None, "n_layer": 20, "n_positions": 2048, "resid_pdrop": 0.0, "rotary_dim": 32,
        "scale_attn_weights": True, "tie_word_embeddings": False, "use_cache": True, "vocab_size": 51200}
M350 = BASE
M2B8 = dict(BASE, n_embd=2560, n_head=32, n_layer=8, rotary_dim=64)
M6B4 = dict(BASE, n_embd=4096, n_head=16, n_layer=4, rotary_dim=64)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["qkv_proj", "out_proj"]}


row = functools.partial(family_row, "codegen", attn="eager")


FIRST = ("f50-cg350m-ampbf16-b8s1024", M350, "training", 8, 1024, "amp_bf16")
rows = [
    row(*FIRST),
    row("f50-cg350m-bf16-b5s777", M350, "training", 5, 777, "bf16"),
    row("f50-cg350m-fp32-b2s512", M350, "training", 2, 512, "fp32"),
    row("f50-cg2b8-bf16-b4s1024-ckpt", M2B8, "training", 4, 1024, "bf16", ckpt=True),
    row("f50-cg6b4-bf16-b3s700", M6B4, "training", 3, 700, "bf16"),
    row("f50-cg350m-ampfp16-b6s600-acc2", M350, "training", 6, 600, "amp_fp16", accum=2),
    row("f50-cg2b8-bf16-lora-b4s1000", M2B8, "training", 4, 1000, "bf16", lora=LORA),
    row("f50-cg2b8-infer-bf16-b4s900-g16", M2B8, "inference", 4, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
