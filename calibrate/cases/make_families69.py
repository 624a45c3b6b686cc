#!/usr/bin/env python3
"""Family set 69 (MiMo-V2-Flash, mimo_v2_flash: MiMoV2FlashForCausalLM), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families69-input.jsonl. Two cuts of the published
XiaomiMiMo/MiMo-V2-Flash widths (models/zoo/mimo-v2-flash.json), in the 5.17 class's keys (layer_types,
mlp_layer_types; rope_parameters left to the class's per-type defaults, factor 0.334 -> 64 rotary dims of 192):
  P (published widths): hidden 4096, 64 heads x 192 (values 128) over 4 KV heads on full layers and 8 on sliding ones
     (with the per-head sinks), window 128, dense intermediate 16384, moe_intermediate 2048 top 8, vocabulary 152576;
     cut to 3 layers (full + dense, then two sliding + sparse) and 16 routed experts (of 256);
  S (scaled body, the published head widths): hidden 2048, 32 heads x 192 (values 128) over 2 / 4 KV heads, dense
     intermediate 8192, 32 experts of 1024 (top 8), 4 layers full / sliding / sliding / full, dense / sparse x 3.
Eager only (_supports_sdpa is False: from_config refuses sdpa); amp bf16 / fp32 / amp fp16 with accumulation / bf16
checkpointed / LoRA on q / k / v / o (peft 0.21 has no default target for mimo_v2_flash) / generate() from a
prompt past the window. Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from the
prediction at the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families69.py > calibrate/cases/families69-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 26.0, 34.4  # the uncapped f69-mimos-ampbf16-b3s1000 row predicted 27621.5 MiB allocated, 34174 reserved (this commit)

BASE = {"vocab_size": 152576, "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 3,
        "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 192, "v_head_dim": 128,
        "hidden_act": "silu", "max_position_embeddings": 1048576, "rms_norm_eps": 1e-05,
        "tie_word_embeddings": False, "attention_bias": False, "attention_dropout": 0.0,
        "moe_intermediate_size": 2048, "num_experts_per_tok": 8, "n_routed_experts": 16,
        "routed_scaling_factor": None, "n_group": 1, "topk_group": 1, "norm_topk_prob": True,
        "sliding_window": 128, "attention_value_scale": 0.707,
        "layer_types": ["full_attention", "sliding_attention", "sliding_attention"],
        "mlp_layer_types": ["dense", "sparse", "sparse"], "use_cache": True}
P = BASE
S = dict(BASE, hidden_size=2048, intermediate_size=8192, num_attention_heads=32, num_key_value_heads=2,
         moe_intermediate_size=1024, n_routed_experts=32, num_hidden_layers=4,
         layer_types=["full_attention", "sliding_attention", "sliding_attention", "full_attention"],
         mlp_layer_types=["dense", "sparse", "sparse", "sparse"])
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}


row = functools.partial(family_row, "mimo_v2_flash", attn="eager")


FIRST = ("f69-mimos-ampbf16-b3s1000", S, "training", 3, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f69-mimos-fp32-b1s700", S, "training", 1, 700, "fp32"),
    row("f69-mimos-ampfp16-b2s700-acc2", S, "training", 2, 700, "amp_fp16", accum=2),
    row("f69-mimos-bf16-ckpt-b5s1000", S, "training", 5, 1000, "bf16", ckpt=True),
    row("f69-mimop-bf16-lora-b3s700", P, "training", 3, 700, "bf16", lora=LORA),
    row("f69-mimop-infer-bf16-b3s300-g16", P, "inference", 3, 300, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
