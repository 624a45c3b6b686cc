#!/usr/bin/env python3
"""Family set 23, jamba (AI21 JambaForCausalLM): Mamba-1 mixers (with RMS norms on dt / B / C) interleaved with
attention layers (attn_layer_period 8, offset 4) and MoE MLPs (expert_layer_period 2, offset 1: 16 experts, top 2),
run on transformers' PyTorch paths (no mamba_ssm / causal_conv1d kernels on the measuring machine: the sequential
selective scan, one small step per token; the experts through 5.17's default grouped_mm).
Widths: ai21labs/Jamba-v0.1 and AI21-Jamba-1.5-Mini (the same: 4096 hidden, 14336 intermediate, 32 heads / 8 KV,
16 experts, vocabulary 65536, dt rank 256, state 16, conv 4, expand 2) with only the layer count shrunk, the real
periods kept: 5 layers hold layers 0..4 (mamba at 0-3, attention at 4, MoE at 1 and 3), 8 layers one whole attention
period, 2 layers a dense and an MoE mamba layer, 1 layer a dense mamba layer. One MoE layer alone is 2.8 B parameters,
so the bigger training rows use SGD (with or without momentum) to stay under 60 GiB. Held out: the AI21-Jamba-1.5-Large width
(8192 hidden, 24576 intermediate, 64 heads / 8 KV, dt rank 512), one layer.
The harness builds it through calibrate/harness_kinds/dec.py (AutoModelForCausalLM; harness.HF_TYPES lacks jamba).
tuning(): ids f23-jam-*, measured with whole-run recordings before the builder is checked against them;
holdout(): ids f24-jam-*, other shapes and settings, predicted at the final commit and measured blind.
Usage: python3 jamba.py   (JSONL: tuning, then holdout)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

tr = training
# ai21labs/AI21-Jamba-1.5-Mini (= Jamba-v0.1) config.json widths; num_hidden_layers set per case
JAM = {"vocab_size": 65536, "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
       "num_key_value_heads": 8, "num_experts": 16, "num_experts_per_tok": 2, "attn_layer_period": 8,
       "attn_layer_offset": 4, "expert_layer_period": 2, "expert_layer_offset": 1, "mamba_d_state": 16,
       "mamba_d_conv": 4, "mamba_expand": 2, "mamba_dt_rank": 256, "mamba_conv_bias": True,
       "mamba_proj_bias": False, "rms_norm_eps": 1e-6, "hidden_act": "silu", "tie_word_embeddings": False,
       "max_position_embeddings": 262144, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
J1, J2, J5, J8 = (dict(JAM, num_hidden_layers=n) for n in (1, 2, 5, 8))
# ai21labs/AI21-Jamba-1.5-Large width, one layer
JL1 = dict(JAM, hidden_size=8192, intermediate_size=24576, num_attention_heads=64, num_key_value_heads=8,
           mamba_dt_rank=512, num_hidden_layers=1)


def tuning():
    return [
        tr("f23-jam-bf16-b2s512-5l-sgd", hf("jamba", J5), 2, 512, "bf16", "sgd", _est_gib=38),
        tr("f23-jam-ampbf16-b1s1000-2l-ckpt-sgd", hf("jamba", J2), 1, 1000, "amp_bf16", "sgd", ckpt=True,
           _est_gib=34),
        tr("f23-jam-fp32-b1s384-1l-acc2", hf("jamba", J1), 1, 384, "fp32", "adamw", accum=2, _est_gib=18),
        tr("f23-jam-bf16-eager-b1s700-5l-ckpt-acc2-sgdm", hf("jamba", J5, "eager"), 1, 700, "bf16",
           "sgd_momentum", ckpt=True, accum=2, _est_gib=50),
        dict(inference("f23-jam-infer-bf16-b4s512-g16-8l", hf("jamba", J8), 4, 512, "bf16", 16), _est_gib=31),
        dict(inference("f23-jam-infer-ampfp16-b2s1000-g24-5l-eager", hf("jamba", J5, "eager"), 2, 1000,
                       "amp_fp16", 24), _est_gib=33),
    ]


def holdout():
    return [
        tr("f24-jam-large-ampfp16-b1s400-1l", hf("jamba", JL1), 1, 400, "amp_fp16", "adamw", _est_gib=46),
        tr("f24-jam-bf16-b5s300-2l", hf("jamba", J2), 5, 300, "bf16", "adamw", _est_gib=41),
        dict(inference("f24-jam-infer-bf16-b3s1000-g20-5l-eager", hf("jamba", J5, "eager"), 3, 1000, "bf16", 20),
             _est_gib=19),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
