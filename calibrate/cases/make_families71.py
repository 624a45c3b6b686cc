#!/usr/bin/env python3
"""Family set 71 (Hunyuan v3, hy_v3: HYV3ForCausalLM, Tencent Hy3), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families71-input.jsonl. No copy of the published
checkpoint's config.json was found (models/zoo/README.md, hy-v3-defaults: HYV3Config's defaults, which Hy3-preview's
model card agrees with), so three bodies:
  HY3: the class defaults' widths (hidden 4096, 64 heads / 8 KV heads of 128, dense intermediate 13312, experts of
       1536 top 8 plus one shared expert, the fp32 combine, vocabulary 120832), cut to 4 layers (layer 0 dense, three
       sparse by the default mlp_layer_types) and 16 experts;
  SMALL: hidden 2048, 16 / 4 heads of 128, dense intermediate 6144, 32 experts of 768 top 8, 5 layers;
  PLUS: SMALL with the class's other options switched on: attention_bias and mlp_bias (q / k / v / o and every MLP
       projection, the shared experts' too), enable_moe_fp32_combine False, two shared experts, mlp_layer_types
       ["dense", "sparse", "dense", "sparse"].
SDPA and eager; bf16 / amp bf16 / fp32 / amp fp16 with accumulation and checkpointing, LoRA on q_proj / v_proj
(peft 0.21 has no default target for hy_v3), generate(). Caps: two copies of the first row under memory_cap_gib
near its predicted peak (set from the prediction at the commit that adds the predictions).
Usage: python3 calibrate/cases/make_families71.py > calibrate/cases/families71-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 21.6, 25.9  # the uncapped f71-hy3-bf16-b3s700 row predicted 23128.8 MiB allocated, 25922 reserved (this commit)

HY3 = {"architectures": ["HYV3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
       "enable_moe_fp32_combine": True, "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096,
       "intermediate_size": 13312, "max_position_embeddings": 131072, "mlp_bias": False,
       "moe_intermediate_size": 1536, "num_attention_heads": 64, "num_experts": 16, "num_experts_per_tok": 8,
       "num_hidden_layers": 4, "num_key_value_heads": 8, "num_shared_experts": 1, "rms_norm_eps": 1e-05,
       "rope_parameters": {"rope_theta": 11158840.0, "rope_type": "default"}, "router_scaling_factor": 2.826,
       "tie_word_embeddings": False, "use_cache": True, "vocab_size": 120832}
SMALL = dict(HY3, hidden_size=2048, num_attention_heads=16, num_key_value_heads=4, intermediate_size=6144,
             moe_intermediate_size=768, num_experts=32, num_hidden_layers=5)
PLUS = dict(SMALL, attention_bias=True, mlp_bias=True, enable_moe_fp32_combine=False, num_shared_experts=2,
            num_hidden_layers=4, mlp_layer_types=["dense", "sparse", "dense", "sparse"])
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


row = functools.partial(family_row, "hy_v3")


FIRST = ("f71-hy3-bf16-b3s700", HY3, "training", 3, 700, "bf16")
rows = [
    row(*FIRST),
    row("f71-hy3-bf16-lora-b5s1000", HY3, "training", 5, 1000, "bf16", lora=LORA),
    row("f71-small-ampbf16-b3s700", SMALL, "training", 3, 700, "amp_bf16"),
    row("f71-plus-fp32-eager-b2s300", PLUS, "training", 2, 300, "fp32", attn="eager"),
    row("f71-plus-ampfp16-b3s600-acc2-ckpt", PLUS, "training", 3, 600, "amp_fp16", ckpt=True, accum=2),
    row("f71-hy3-infer-bf16-b4s900-g16", HY3, "inference", 4, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
