#!/usr/bin/env python3
"""Family set 23, the Mamba2 / attention hybrids granitemoehybrid (GraniteMoeHybridForCausalLM: IBM Granite 4.0-H) and
bamba (BambaForCausalLM: Bamba-9B), and the Mamba-1 variant falcon_mamba (FalconMambaForCausalLM), run on their PyTorch
paths: the measuring machine has no mamba_ssm / causal_conv1d kernels, so the hybrids' mixers run torch_forward
(the chunked SSD in PyTorch ops, fp32 intermediates of batch x padded length x chunk_size x heads x state) and
falcon_mamba runs the sequential selective scan. None of the three types is in the harness's own list, so the plugin
calibrate/harness_kinds/mamba.py builds them through AutoModelForCausalLM (token ids in, labels = ids; inference reads
the cache from past_key_values, or cache_params for falcon_mamba). falcon_mamba has no attention: transformers refuses
attn_implementation="sdpa" for it, so its cases say "eager".
Published widths: ibm-granite/granite-4.0-h-tiny (64 experts of 512, top 6, shared MLP 1024, 48 mamba heads of 64,
NoPE attention), granite-4.0-h-micro (dense: shared MLP 8192 only, 64 mamba heads), granite-4.0-h-small (72 experts
of 768, top 10, 128 mamba heads), ibm-ai-platform/Bamba-9B (128 mamba heads, SwiGLU 14336, partial rotary 0.5),
tiiuae/falcon-mamba-7b (2 of 64 layers); few layers, keeping mamba layers before the attention layer as the
checkpoints order them. tuning(): measured with whole-run allocator recordings before the builders are checked
against them (ids f23-*); holdout(): other shapes and settings, predicted at the final commit and measured blind
(ids f24-*).
Usage: python3 hyb.py   (JSONL: tuning, then holdout)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

M, A = "linear_attention", "full_attention"  # 5.17's names (configs' legacy "mamba" / "attention" map to them)

# ibm-granite/granite-4.0-h-tiny config.json widths (40 layers: attention at 5, 15, 25, 35)
GMH_TINY = {"vocab_size": 100352, "hidden_size": 1536, "num_attention_heads": 12, "num_key_value_heads": 4,
            "intermediate_size": 512, "shared_intermediate_size": 1024, "num_local_experts": 64,
            "num_experts_per_tok": 6, "mamba_n_heads": 48, "mamba_d_head": 64, "mamba_d_state": 128,
            "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 256,
            "mamba_conv_bias": True, "mamba_proj_bias": False, "position_embedding_type": "nope",
            "embedding_multiplier": 12.0, "attention_multiplier": 0.0078125, "residual_multiplier": 0.22,
            "logits_scaling": 6.0, "rms_norm_eps": 1e-5, "tie_word_embeddings": True, "output_router_logits": False,
            "router_aux_loss_coef": 0.0, "max_position_embeddings": 131072, "pad_token_id": 100256,
            "bos_token_id": 100257, "eos_token_id": 100257}
# ibm-granite/granite-4.0-h-micro: dense (no routed experts), 64 mamba heads of 64
GMH_MICRO = dict(GMH_TINY, hidden_size=2048, num_attention_heads=32, num_key_value_heads=8, intermediate_size=8192,
                 shared_intermediate_size=8192, num_local_experts=0, num_experts_per_tok=0, mamba_n_heads=64,
                 attention_multiplier=0.015625, logits_scaling=8.0)
# ibm-granite/granite-4.0-h-small: 72 experts of 768, top 10, 128 mamba heads of 64 (shared MLP 1024: with it
# the 40 layers come to the published 32B)
GMH_SMALL = dict(GMH_TINY, hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, intermediate_size=768,
                 shared_intermediate_size=1024, num_local_experts=72, num_experts_per_tok=10, mamba_n_heads=128,
                 residual_multiplier=0.246, logits_scaling=16.0)
# ibm-ai-platform/Bamba-9B config.json widths (32 layers, attention at 9, 18, 27)
BAMBA_9B = {"vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
            "num_key_value_heads": 8, "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_d_state": 128,
            "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_chunk_size": 256,
            "mamba_conv_bias": True, "mamba_proj_bias": False, "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
            "max_position_embeddings": 262144, "pad_token_id": 0, "bos_token_id": 1,
            "eos_token_id": 2}
# tiiuae/falcon-mamba-7b config.json widths, 2 of 64 layers (the published config says expand 16 and intermediate_size
# 8192; 5.17's config derives intermediate_size = expand x hidden, so expand 2 states the published 8192 directly)
FM_7B_2 = {"vocab_size": 65024, "hidden_size": 4096, "num_hidden_layers": 2, "state_size": 16, "expand": 2,
           "conv_kernel": 4, "time_step_rank": 256, "layer_norm_epsilon": 1e-5, "use_bias": False,
           "use_conv_bias": True, "residual_in_fp32": True, "tie_word_embeddings": False, "mixer_rms_eps": 1e-6,
           "pad_token_id": 0, "bos_token_id": 0, "eos_token_id": 11}


def gmh(base, types, **kw):
    c = dict(base, num_hidden_layers=len(types), layer_types=list(types))
    c.update(kw)
    return c


def bam(layers, attn_at, **kw):
    c = dict(BAMBA_9B, num_hidden_layers=layers, attn_layer_indices=list(attn_at))
    c.update(kw)
    return c


GMH, BAM, FM = "granitemoehybrid", "bamba", "falcon_mamba"


def tuning():
    return [
        # granite-4.0-h-tiny's first six layers (five mamba, one NoPE attention), MoE 64 / top 6, bf16
        training("f23-gmh-tiny6-bf16-b2s1024", hf(GMH, gmh(GMH_TINY, [M] * 5 + [A])), 2, 1024, "bf16", "adamw",
                 _est_gib=38),
        # granite-4.0-h-micro (dense) eight layers, amp bf16, checkpointed, odd length (six chunks of 256)
        training("f23-gmh-micro8-ampbf16-ckpt-b1s1500", hf(GMH, gmh(GMH_MICRO, [M] * 5 + [A] + [M] * 2)), 1, 1500,
                 "amp_bf16", "adamw", ckpt=True, _est_gib=40),
        # granite-4.0-h-tiny six layers served: prefill with the hybrid cache, then greedy generate()
        dict(inference("f23-gmh-tiny6-infer-bf16-b2s1000-g16", hf(GMH, gmh(GMH_TINY, [M] * 5 + [A])), 2, 1000,
                       "bf16", 16), _est_gib=16),
        # Bamba-9B widths, three layers (mamba, attention, mamba), amp fp16, eager attention, two micro-batches
        training("f23-bam-9b3-ampfp16-eager-acc2-b1s250", hf(BAM, bam(3, [1]), "eager"), 1, 250, "amp_fp16",
                 "adamw", accum=2, _est_gib=40),
        # Bamba-9B widths, four layers (mamba, mamba, attention, mamba) served, bf16
        dict(inference("f23-bam-9b4-infer-bf16-b1s1000-g16", hf(BAM, bam(4, [2])), 1, 1000, "bf16", 16),
             _est_gib=24),
        # falcon-mamba-7b two layers, bf16 (the sequential selective scan with RMS norms on dt / B / C)
        training("f23-fm-7b2-bf16-b2s512", hf(FM, FM_7B_2, "eager"), 2, 512, "bf16", "adamw", _est_gib=12),
    ]


def holdout():
    return [
        # granite-4.0-h-small two layers (mamba, attention), MoE 72 / top 10, bf16, checkpointed
        training("f24-gmh-small2-bf16-ckpt-b1s700", hf(GMH, gmh(GMH_SMALL, [M, A])), 1, 700, "bf16", "adamw",
                 ckpt=True, _est_gib=45),
        # granite-4.0-h-tiny widths with rotary attention (position_embedding_type rope), fp32, eager, odd length
        training("f24-gmh-tiny4rope-fp32-eager-b2s333", hf(GMH, gmh(GMH_TINY, [M, A, M, A],
                 position_embedding_type="rope",
                 rope_parameters={"rope_type": "default", "rope_theta": 10000.0}), "eager"), 2, 333, "fp32", "adamw",
                 _est_gib=30),
        # Bamba-9B four layers served under amp bf16, batch 2, 24 new tokens
        dict(inference("f24-bam-9b4-infer-ampbf16-b2s300-g24", hf(BAM, bam(4, [2])), 2, 300, "amp_bf16", 24),
             _est_gib=42),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
