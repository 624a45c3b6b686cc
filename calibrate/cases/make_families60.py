#!/usr/bin/env python3
"""Family set 60 (Cohere2 MoE, cohere2_moe: Cohere2MoeForCausalLM, Command A+), written from the installed
transformers 5.17 modeling file without a device: writes calibrate/cases/families60-input.jsonl. No copy of the
published checkpoint's config.json was found (models/zoo/README.md, cohere2-moe-defaults), so two scaled bodies:
  DEF: the class's features at a trainable width - softmax over the top-k router logits, no shared experts, every
       layer sparse, Cohere2's LayerNorm (rms_norm_eps None), sliding_window 512 on three layers of four, rotary on
       the sliding layers only, tied head with logit_scale 0.0625, vocabulary 256000; hidden 2048, 16 heads / 4 KV
       heads of 128, 8 experts of 2816, top 2, 4 layers;
  PLUS: what the Command A+ coverage describes (routed experts plus one shared expert, a 3:1 sliding pattern) with
       the class's other options switched on - a sigmoid router renormalised (norm_topk_prob), the shared expert
       averaged in, first_k_dense_replace 1 (one dense prefix layer of prefix_dense_intermediate_size 5632, full
       attention with force_rope), RMSNorm (rms_norm_eps 1e-5), sliding_window 256; hidden 2048, 16 / 4 heads of
       128, 16 experts of 1408, top 4, 5 layers (dense full, three sliding, one full).
SDPA and eager; amp bf16 / bf16 / fp32 / amp fp16 with accumulation and checkpointing, LoRA on q_proj / v_proj
(peft 0.21 has no default target for cohere2_moe), generate(). Caps: two copies of the first row under
memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the predictions).
Usage: python3 calibrate/cases/make_families60.py > calibrate/cases/families60-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 20.2, 27.1  # the uncapped f60-c2m-ampbf16-b3s700 row predicted 21616.7 MiB allocated, 27150 reserved (this commit)

DEF = {"attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 5, "eos_token_id": 255001, "head_dim": 128,
       "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 2816, "layer_norm_eps": 1e-05,
       "logit_scale": 0.0625, "max_position_embeddings": 8192, "num_attention_heads": 16, "num_experts": 8,
       "num_experts_per_tok": 2, "num_hidden_layers": 4, "num_key_value_heads": 4, "pad_token_id": 0,
       "rope_theta": 10000.0, "sliding_window": 512, "sliding_window_pattern": 4, "tie_word_embeddings": True,
       "use_cache": True, "vocab_size": 256000}
PLUS = dict(DEF, intermediate_size=1408, num_experts=16, num_experts_per_tok=4, num_shared_experts=1,
            shared_expert_combination_strategy="average", expert_selection_fn="sigmoid", norm_topk_prob=True,
            first_k_dense_replace=1, prefix_dense_intermediate_size=5632, rms_norm_eps=1e-05, sliding_window=256,
            num_hidden_layers=5)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}


row = functools.partial(family_row, "cohere2_moe")


FIRST = ("f60-c2m-ampbf16-b3s700", DEF, "training", 3, 700, "amp_bf16")
rows = [
    row(*FIRST),
    row("f60-c2m-bf16-eager-b2s1000", DEF, "training", 2, 1000, "bf16", attn="eager"),
    row("f60-c2mplus-fp32-b2s300", PLUS, "training", 2, 300, "fp32"),
    row("f60-c2mplus-ampfp16-b3s600-acc2-ckpt", PLUS, "training", 3, 600, "amp_fp16", ckpt=True, accum=2),
    row("f60-c2mplus-bf16-lora-b5s1000", PLUS, "training", 5, 1000, "bf16", lora=LORA),
    row("f60-c2mplus-infer-bf16-b4s900-g16", PLUS, "inference", 4, 900, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
