#!/usr/bin/env python3
"""Family set 21, six decoders users bring (glm, helium, hunyuan_v1_moe, dots1, jetmoe, dbrx), causal LMs built by
harness_kinds/dec.py with AutoModelForCausalLM: published widths, few layers where the step would be large.
Widths: THUDM/glm-4-9b (GlmConfig defaults: 4096 / 32 heads / 2 KV heads / 13696 fused gate_up / vocab 151552);
kyutai helium 2B (2560 / 20 heads / 7040 / vocab 48000); tencent/Hunyuan-A13B (4096 / 32 heads / 8 KV / head_dim
128 / 64 experts of 3072, top 8, one shared MLP / vocab 128167); rednote-hilab/dots.llm1 (4096 / 32 heads / 128
experts of 1408, top 6, 2 shared, first layer dense 10944 / vocab 152064); jetmoe/jetmoe-8b (2048 / MoA of 8
experts top 2 with 16 KV heads of 128 / MoE 8 x 5632 / vocab 32000, tied); databricks/dbrx-instruct (6144 / 48 heads
/ 8 KV / clip_qkv 8 / 16 experts of 10752, top 4 / vocab 100352; DbrxAttention reads attn_config.rope_theta, which
DbrxAttentionConfig of 5.17 has no field for: given here as the published config does).
tuning(): ids f21-<short>-*, measured with whole-run recordings before the builders are checked against them;
holdout(): ids f22-<short>-*, other shapes and settings, predicted at the final commit and measured blind.
Usage: python3 dec.py   (JSONL: tuning, then holdout)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

tr = training
GLM = {"vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 4,
       "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "attention_bias": True,
       "rms_norm_eps": 1.5625e-07, "max_position_embeddings": 131072, "tie_word_embeddings": False}
GLM8 = dict(GLM, num_hidden_layers=8)
HEL = {"vocab_size": 48000, "hidden_size": 2560, "intermediate_size": 7040, "num_hidden_layers": 12,
       "num_attention_heads": 20, "num_key_value_heads": 20, "head_dim": 128, "rms_norm_eps": 1e-8,
       "max_position_embeddings": 4096, "tie_word_embeddings": False}
HY = {"vocab_size": 128167, "hidden_size": 4096, "intermediate_size": 3072, "num_hidden_layers": 1,
      "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_experts": 64, "moe_topk": 8,
      "rms_norm_eps": 1e-5, "max_position_embeddings": 32768, "tie_word_embeddings": False}
DOTS = {"vocab_size": 152064, "hidden_size": 4096, "intermediate_size": 10944, "moe_intermediate_size": 1408,
        "num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 32, "n_routed_experts": 128,
        "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "norm_topk_prob": True,
        "routed_scaling_factor": 2.5, "rms_norm_eps": 1e-5, "max_position_embeddings": 32768,
        "tie_word_embeddings": False}
JET = {"vocab_size": 32000, "hidden_size": 2048, "num_hidden_layers": 6, "num_key_value_heads": 16,
       "kv_channels": 128, "intermediate_size": 5632, "num_local_experts": 8, "num_experts_per_tok": 2,
       "max_position_embeddings": 4096, "rms_norm_eps": 1e-6, "tie_word_embeddings": True}
JET12 = dict(JET, num_hidden_layers=12)
DBRX = {"vocab_size": 100352, "d_model": 6144, "n_heads": 48, "n_layers": 2, "max_seq_len": 32768,
        "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 500000},
        "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
        "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4},
        "tie_word_embeddings": False}
DBRX1 = dict(DBRX, n_layers=1)


def tuning():
    return [
        tr("f21-glm-ampbf16-b2s1500-ckpt", hf("glm", GLM), 2, 1500, "amp_bf16", "adamw", ckpt=True, _est_gib=37),
        tr("f21-hel-fp32-b1s1000-eager", hf("helium", HEL, "eager"), 1, 1000, "fp32", "adamw", _est_gib=22),
        tr("f21-hy-bf16-b2s1024-1l", hf("hunyuan_v1_moe", HY), 2, 1024, "bf16", "adamw", _est_gib=31),
        tr("f21-dots-bf16-b2s1000-acc2", hf("dots1", DOTS), 2, 1000, "bf16", "adamw", accum=2, _est_gib=33),
        tr("f21-jet-ampfp16-b4s1024", hf("jetmoe", JET), 4, 1024, "amp_fp16", "adamw", _est_gib=38),
        dict(inference("f21-dbrx-infer-bf16-b4s1000-g16", hf("dbrx", DBRX), 4, 1000, "bf16", 16), _est_gib=18),
    ]


def holdout():
    return [
        tr("f22-dbrx-bf16-b1s1500-1l", hf("dbrx", DBRX1), 1, 1500, "bf16", "adamw", _est_gib=39),
        dict(inference("f22-glm-infer-bf16-b3s1000-g24", hf("glm", GLM8), 3, 1000, "bf16", 24), _est_gib=8),
        dict(inference("f22-jet-infer-bf16-b5s1000-g20", hf("jetmoe", JET12), 5, 1000, "bf16", 20), _est_gib=11),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
