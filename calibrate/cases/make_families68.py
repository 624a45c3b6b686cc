#!/usr/bin/env python3
"""Family set 68 (LongCat-Flash, longcat_flash: LongcatFlashForCausalLM), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families68-input.jsonl. Two cuts of the published
meituan-longcat/LongCat-Flash-Chat config.json (models/zoo/longcat-flash-chat.json):
  P (published widths): hidden 6144, 64 heads of qk_nope 128 + qk_rope 64 and v 128, q_lora_rank 1536, kv_lora_rank
     512, dense MLPs of 12288, experts of 2048, top 12, routed_scaling_factor 6.0, vocabulary 131072, rope_theta 1e7;
     cut to 1 / 2 decoder layers (each two attentions, two MLPs, one MoE) and 16 routed + 8 identity experts (of 512
     + 256): experts.gate_up_proj alone is [24, 4096, 6144] a layer, and every routed expert's SelectBackward makes a
     zero-filled gradient of it;
  S (scaled body, the published ratios): hidden 2048, 16 heads of 64 + 32 and v 64, q_lora_rank 512, kv_lora_rank
     256, MLPs of 4096, experts of 512, 32 routed + 16 identity experts, top 6; 2 decoder layers (3 checkpointed).
SDPA and eager; amp bf16 / fp32 / amp fp16 with accumulation / bf16 checkpointed / LoRA on the MLA projections /
generate(). Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from the prediction
at the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families68.py > calibrate/cases/families68-input.jsonl"""
import functools
import json

from case_helpers import cap_copies, family_row

CAP_LO, CAP_HI = 17.2, 24.2  # the uncapped f68-lcs-ampbf16-b3s1000 row predicted 17992.1 MiB allocated, 24450 reserved (this commit)

BASE = {"vocab_size": 131072, "hidden_size": 6144, "ffn_hidden_size": 12288, "expert_ffn_hidden_size": 2048,
        "num_layers": 2, "num_attention_heads": 64, "q_lora_rank": 1536, "kv_lora_rank": 512,
        "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "moe_topk": 12,
        "n_routed_experts": 16, "zero_expert_num": 8, "routed_scaling_factor": 6.0, "rms_norm_eps": 1e-05,
        "rope_theta": 10000000.0, "max_position_embeddings": 131072, "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2, "use_cache": True}
P = BASE
P1 = dict(BASE, num_layers=1)
S = dict(BASE, hidden_size=2048, ffn_hidden_size=4096, expert_ffn_hidden_size=512, num_attention_heads=16,
         q_lora_rank=512, kv_lora_rank=256, qk_nope_head_dim=64, qk_rope_head_dim=32, head_dim=32, v_head_dim=64,
         moe_topk=6, n_routed_experts=32, zero_expert_num=16)
S3 = dict(S, num_layers=3)
LORA = {"r": 16, "alpha": 32, "dropout": 0.0,
        "target_modules": ["q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"]}


row = functools.partial(family_row, "longcat_flash")


FIRST = ("f68-lcs-ampbf16-b3s1000", S, "training", 3, 1000, "amp_bf16")
rows = [
    row(*FIRST),
    row("f68-lcs-fp32-eager-b2s700", S, "training", 2, 700, "fp32", attn="eager"),
    row("f68-lcs-ampfp16-b4s700-acc2", S, "training", 4, 700, "amp_fp16", accum=2),
    row("f68-lcs3-bf16-ckpt-b5s1000", S3, "training", 5, 1000, "bf16", ckpt=True),
    row("f68-lcp1-bf16-lora-b3s300", P1, "training", 3, 300, "bf16", lora=LORA),
    row("f68-lcp-infer-bf16-b3s300-g16", P, "inference", 3, 300, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
