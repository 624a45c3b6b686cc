#!/usr/bin/env python3
"""Family set 28 (twenty-second session), held out: peft LoRA on families no LoRA case had measured before.
The LoRA rows measured so far are Llama, Qwen2 / Qwen3, Mistral, GPT-2, BERT, Granite, OPT and GLM-4. These rows
put adapters on fused projections (Phi-3's qkv_proj and gate_up_proj, GPT-NeoX's query_key_value), on a sliding-window
model with a 262k vocabulary (Gemma 3), on QK-norm decoders (OLMo-2), on an encoder-decoder (mT5), on a vision
encoder (ViT: transformers 5.17 names its projections q_proj / v_proj), on the attention of two mixture-of-experts
models (gpt-oss, DeepSeek-V3's MLA projections), and one trains an untied head in full through modules_to_save
(OLMo-2). Shapes are odd on purpose (batches 2 .. 48, lengths 300 .. 1500). Every holdout() row is predicted at a
commit before the call that measures it. tuning() holds a row memplan refuses today, measured to learn from: a tied
head (Qwen3-0.6B) in modules_to_save, where peft's ModulesToSaveWrapper deep-copies the embedding's shared weight.
Usage: python3 lora_breadth.py [tuning] [ID=PREDICTED_RESERVED_MIB ...]  (JSONL; named rows get capped copies)"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import capped, hf, print_cases, training  # noqa: E402

# The widths of odd shapes set 3 (the same cut models; GEMMA3_1B there has 7 layers).
from make_odd_shapes3 import GEMMA3_1B as GEMMA3_7L, NEOX_410, OLMO2_4L, PHI3_4L, QWEN3_06  # noqa: E402

MT5_S = {"d_model": 512, "d_ff": 1024, "d_kv": 64, "num_heads": 6, "num_layers": 8, "num_decoder_layers": 8,
         "vocab_size": 250112, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False,
         "decoder_start_token_id": 0, "pad_token_id": 0}
VIT_B = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
         "image_size": 224, "patch_size": 16, "num_labels": 1000}
GPTOSS_2L = {"hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 2, "num_attention_heads": 64,
             "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 8, "num_experts_per_tok": 2,
             "vocab_size": 201088, "sliding_window": 128, "max_position_embeddings": 8192,
             "layer_types": ["sliding_attention", "full_attention"]}
DSV3_3L = {"hidden_size": 1024, "intermediate_size": 2816, "moe_intermediate_size": 512, "num_hidden_layers": 3,
           "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 256, "q_lora_rank": 384,
           "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64, "n_routed_experts": 16,
           "num_experts_per_tok": 4, "n_group": 4, "topk_group": 2, "n_shared_experts": 1,
           "first_k_dense_replace": 1, "vocab_size": 32000, "max_position_embeddings": 4096}
ATTN = "q_proj,k_proj,v_proj,o_proj"
MLA = "q_a_proj,q_b_proj,kv_a_proj_with_mqa,kv_b_proj,o_proj"


def lora(r, targets, dropout=0.05, save=None):
    # peft reads a string as a regular expression (but "all-linear"): module names go as a list
    d = {"r": r, "alpha": 2 * r, "dropout": dropout,
         "target_modules": targets if targets == "all-linear" else targets.split(",")}
    if save:
        d["modules_to_save"] = save
    return d


def tr(id, model_type, config, batch, seq, precision, lo, attn="sdpa", **kw):
    return training(id, hf(model_type, config, attn), batch, seq, precision, "adamw", lora=lo, **kw)


def holdout():
    vit = training("f28-vitb-ampbf16-r16-qv-b48", hf("vit", VIT_B), 48, None, "amp_bf16", "adamw",
                   lora=lora(16, "q_proj,v_proj"))
    del vit["seq_len"]
    return [
        tr("f28-phi3-4l-bf16-r16-qkvo-b3s1500", "phi3", PHI3_4L, 3, 1500, "bf16", lora(16, "qkv_proj,o_proj")),
        tr("f28-phi3-4l-ampbf16-r8-all-b5s700-ckpt", "phi3", PHI3_4L, 5, 700, "amp_bf16", lora(8, "all-linear"),
           grad_checkpointing=True),
        tr("f28-gemma3-7l-bf16-r16-all-b3s1000", "gemma3_text", GEMMA3_7L, 3, 1000, "bf16", lora(16, "all-linear")),
        tr("f28-gemma3-7l-ampbf16-r32-qv-b6s600-ckpt", "gemma3_text", GEMMA3_7L, 6, 600, "amp_bf16",
           lora(32, "q_proj,v_proj"), grad_checkpointing=True),
        tr("f28-neox410-fp32-r16-qkv-b6s500", "gpt_neox", NEOX_410, 6, 500, "fp32", lora(16, "query_key_value")),
        tr("f28-neox410-ampfp16-r8-all-b10s300-a2", "gpt_neox", NEOX_410, 10, 300, "amp_fp16",
           lora(8, "all-linear"), grad_accum_steps=2),
        tr("f28-olmo2-4l-bf16-r16-all-b6s1024-ckpt", "olmo2", OLMO2_4L, 6, 1024, "bf16", lora(16, "all-linear"),
           grad_checkpointing=True),
        tr("f28-olmo2-4l-bf16-r8-qv-lmhead-b3s1000", "olmo2", OLMO2_4L, 3, 1000, "bf16",
           lora(8, "q_proj,v_proj", save=["lm_head"])),
        tr("f28-mt5s-bf16-r8-qv-b8s512t100", "mt5", MT5_S, 8, 512, "bf16", lora(8, "q,v"), target_len=100),
        vit,
        tr("f28-gptoss-2l-bf16-r16-attn-b2s1024-eager", "gpt_oss", GPTOSS_2L, 2, 1024, "bf16", lora(16, ATTN),
           attn="eager"),
        tr("f28-dsv3-3l-bf16-r16-mla-b3s1000", "deepseek_v3", DSV3_3L, 3, 1000, "bf16", lora(16, MLA)),
    ]


def tuning():
    return [tr("f28t-qwen3-06-bf16-r16-all-lmhead-b4s1000", "qwen3", QWEN3_06, 4, 1000, "bf16",
               lora(16, "all-linear", save=["lm_head"]))]


def caps(case, predicted_reserved_mib):
    return [capped(case, predicted_reserved_mib, f, "cap") for f in (0.97, 1.03)]


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["tuning"]:
        print_cases(tuning(), args[1:], caps)
    else:
        rows = holdout()
        for c in rows:
            c["holdout"] = True
        print_cases(rows, args, caps)
