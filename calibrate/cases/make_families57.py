#!/usr/bin/env python3
"""Family set 57 (Arcee Trinity, afmoe: AfmoeForCausalLM), written from the installed transformers 5.17 modeling file
without a device: writes calibrate/cases/families57-input.jsonl. Widths follow the published config.json files
(models/zoo/trinity-nano.json, trinity-mini.json): 128 experts top 8 + 1 shared, 2 dense first layers, head_dim 128,
sliding window 2048 with every 4th layer global, mup_enabled (embeddings times sqrt(hidden)), vocabulary 200192,
untied; Nano hidden 1024, 8 heads / 2 KV heads, experts of 256, dense 3072; Mini hidden 2048, 32 heads / 4 KV heads,
experts of 1024, dense 6144. The rows drop the keys that would change the run or are not fields (dtype "bfloat16":
from_config would build every row in bf16; layer_types, which must match the cut num_hidden_layers: the class
derives it from global_attn_every_n_layers) and cut num_hidden_layers to fit an H100; two rows shorten
sliding_window below the sequence so the sliding layers' masks act (eager, and masked SDPA with repeated KV heads).
SDPA and eager; amp bf16 / bf16 / fp32 / amp fp16 with accumulation, checkpointing, LoRA on q / k / v / o, generate().
Caps: two copies of the first row under memory_cap_gib near its predicted reserved peak (set from the prediction at
the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families57.py > calibrate/cases/families57-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 19.3, 26.3  # the uncapped f57-nano-8l-ampbf16-b3s700 row predicted 20437.5 MiB allocated, 25898 reserved (this commit)

NANO = {"architectures": ["AfmoeForCausalLM"], "attention_dropout": 0.0, "global_attn_every_n_layers": 4,
        "head_dim": 128, "hidden_act": "silu", "hidden_size": 1024, "initializer_range": 0.02,
        "intermediate_size": 3072, "max_position_embeddings": 131072, "moe_intermediate_size": 256,
        "mup_enabled": True, "num_attention_heads": 8, "num_dense_layers": 2, "num_experts": 128,
        "num_experts_per_tok": 8, "num_hidden_layers": 56, "num_key_value_heads": 2, "num_shared_experts": 1,
        "rms_norm_eps": 1e-05, "rope_theta": 10000, "route_scale": 2.826, "sliding_window": 2048,
        "tie_word_embeddings": False, "use_cache": True, "vocab_size": 200192}
MINI = dict(NANO, hidden_size=2048, intermediate_size=6144, moe_intermediate_size=1024, num_attention_heads=32,
            num_hidden_layers=32, num_key_value_heads=4)


def cut(base, n, **kw):
    return dict(base, num_hidden_layers=n, **kw)


N4, N6W, N8 = cut(NANO, 4), cut(NANO, 6, sliding_window=256), cut(NANO, 8)
M4, M6W = cut(MINI, 4), cut(MINI, 6, sliding_window=512)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}


row = functools.partial(family_row, "afmoe")


FIRST = ("f57-nano-8l-ampbf16-b3s700", N8, "training", 3, 700, "amp_bf16")
rows = [
    row(*FIRST),
    row("f57-mini-4l-bf16-b5s1000", M4, "training", 5, 1000, "bf16"),
    row("f57-nano-4l-fp32-b2s300", N4, "training", 2, 300, "fp32"),
    row("f57-nano-8l-ampfp16-b3s500-acc2", N8, "training", 3, 500, "amp_fp16", accum=2),
    row("f57-mini-4l-bf16-ckpt-b6s1000", M4, "training", 6, 1000, "bf16", ckpt=True),
    row("f57-nano-6l-sw256-bf16-eager-b3s700", N6W, "training", 3, 700, "bf16", attn="eager"),
    row("f57-mini-6l-sw512-bf16-lora-b3s1000", M6W, "training", 3, 1000, "bf16", lora=LORA),
    row("f57-nano-8l-infer-bf16-b4s900-g16", N8, "inference", 4, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
