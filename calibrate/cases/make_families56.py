#!/usr/bin/env python3
"""Family set 56 (GLM-4.7-Flash, glm4_moe_lite: Glm4MoeLiteForCausalLM), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families56-input.jsonl. Widths follow zai-org/GLM-4.7-Flash's
config.json (models/zoo/glm-4.7-flash.json: hidden 2048, 20 heads of MLA with q_lora_rank 768, kv_lora_rank 512,
qk_nope 192 + qk_rope 64, v 256; 64 routed experts of 1536 top 4 + 1 shared, sigmoid noaux_tc routing over one
group, routed_scaling_factor 1.8; dense layer 10240 wide; vocabulary 154880, untied), without the keys the class
does not have and that would change the run (dtype "bfloat16": from_config would build every row in bf16;
topk_method, num_nextn_predict_layers) and with num_hidden_layers cut so that each row fits an H100 (a MoE layer
is 635M parameters): mlp_layer_types' default (["dense"] + ["sparse"] * (N - 1)) gives 1 dense + N - 1 MoE layers;
the eager row passes its own ["sparse", "dense", "sparse"]. SDPA and eager; amp bf16 / bf16 / fp32 / amp fp16 with
accumulation, checkpointing, LoRA on the MLA projections, generate(). Caps: two copies of the first row under
memory_cap_gib near its predicted reserved peak (set from the prediction at the commit that adds the predictions,
then frozen).
Usage: python3 calibrate/cases/make_families56.py > calibrate/cases/families56-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 24.6, 27.6  # the uncapped f56-glm47f-2l-ampbf16-b3s700 row predicted 25905.2 MiB allocated, 27268 reserved (this commit)

FLASH = {"architectures": ["Glm4MoeLiteForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
         "pad_token_id": 154820, "eos_token_id": [154820, 154827, 154829], "first_k_dense_replace": 1,
         "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 10240, "kv_lora_rank": 512,
         "max_position_embeddings": 202752, "moe_intermediate_size": 1536, "n_group": 1, "n_routed_experts": 64,
         "n_shared_experts": 1, "norm_topk_prob": True, "num_attention_heads": 20, "num_experts_per_tok": 4,
         "num_hidden_layers": 47, "num_key_value_heads": 20, "partial_rotary_factor": 1.0, "q_lora_rank": 768,
         "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "rms_norm_eps": 1e-05, "rope_theta": 1000000,
         "routed_scaling_factor": 1.8, "tie_word_embeddings": False, "topk_group": 1, "use_cache": True,
         "v_head_dim": 256, "vocab_size": 154880}


def layers(n, **kw):
    return dict(FLASH, num_hidden_layers=n, **kw)


L2, L3S, L4, L6, L8 = layers(2), layers(3, mlp_layer_types=["sparse", "dense", "sparse"]), layers(4), layers(6), layers(8)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0,
        "target_modules": ["q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"]}


row = functools.partial(family_row, "glm4_moe_lite")


FIRST = ("f56-glm47f-2l-ampbf16-b3s700", L2, "training", 3, 700, "amp_bf16")
rows = [
    row(*FIRST),
    row("f56-glm47f-4l-bf16-b5s1000", L4, "training", 5, 1000, "bf16"),
    row("f56-glm47f-2l-fp32-b2s300", L2, "training", 2, 300, "fp32"),
    row("f56-glm47f-2l-ampfp16-b3s500-acc2", L2, "training", 3, 500, "amp_fp16", accum=2),
    row("f56-glm47f-4l-bf16-ckpt-b6s1000", L4, "training", 6, 1000, "bf16", ckpt=True),
    row("f56-glm47f-3ls-bf16-eager-b3s700", L3S, "training", 3, 700, "bf16", attn="eager"),
    row("f56-glm47f-8l-bf16-lora-b3s1000", L8, "training", 3, 1000, "bf16", lora=LORA),
    row("f56-glm47f-6l-infer-bf16-b4s900-g16", L6, "inference", 4, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
