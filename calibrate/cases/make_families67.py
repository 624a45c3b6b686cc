#!/usr/bin/env python3
"""Family set 67 (MiniCPM3, minicpm3: MiniCPM3ForCausalLM), written from the installed transformers 5.17 modeling
file without a device: writes calibrate/cases/families67-input.jsonl. The published openbmb/MiniCPM3-4B widths
(models/zoo/minicpm3-4b.json: hidden 2560, 40 heads of qk_nope 64 + qk_rope 32 and v 64, q_lora_rank 768,
kv_lora_rank 256, intermediate 6400, vocabulary 73448, tied, scale_emb 12 (an integer: an int64 buffer),
scale_depth 1.4, dim_model_base 256) cut to 4 layers (6 for the checkpointed row), with the default rotary: the
published longrope dict has no "factor", which 5.17's MiniCPM3Attention reads for any non-default rope type
(KeyError), and the rotary type changes only inv_freq's values. One row (fp32 eager) has q_lora_rank null (a plain
q_proj) and a float scale_emb (a buffer of the weights' dtype). SDPA and eager; amp bf16 / fp32 / amp fp16 with
accumulation / bf16 checkpointed / LoRA on the MLA projections / generate(). Caps: two copies of the first row under
memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the predictions, then
frozen).
Usage: python3 calibrate/cases/make_families67.py > calibrate/cases/families67-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 9.6, 12.3  # the uncapped f67-mcpm-ampbf16-b3s1000 row predicted 10344.5 MiB allocated, 12158 reserved (this commit)

P = {"vocab_size": 73448, "hidden_size": 2560, "intermediate_size": 6400, "num_hidden_layers": 4,
     "num_attention_heads": 40, "num_key_value_heads": 40, "q_lora_rank": 768, "kv_lora_rank": 256,
     "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "hidden_act": "silu", "rms_norm_eps": 1e-05,
     "max_position_embeddings": 32768, "scale_emb": 12, "scale_depth": 1.4, "dim_model_base": 256,
     "tie_word_embeddings": True, "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 1,
     "eos_token_id": [2, 73440], "use_cache": True}
Q = dict(P, q_lora_rank=None, scale_emb=12.0)
D6 = dict(P, num_hidden_layers=6)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0,
        "target_modules": ["q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"]}


row = functools.partial(family_row, "minicpm3")


FIRST = ("f67-mcpm-ampbf16-b3s1000", P, "training", 3, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f67-mcpmq-fp32-eager-b2s700", Q, "training", 2, 700, "fp32", attn="eager"),
    row("f67-mcpm-ampfp16-b5s700-acc2", P, "training", 5, 700, "amp_fp16", accum=2),
    row("f67-mcpm6-bf16-ckpt-b6s1000", D6, "training", 6, 1000, "bf16", ckpt=True),
    row("f67-mcpm-bf16-lora-b5s700", P, "training", 5, 700, "bf16", lora=LORA),
    row("f67-mcpm-infer-bf16-b3s300-g16", P, "inference", 3, 300, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
