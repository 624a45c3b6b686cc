#!/usr/bin/env python3
"""Family set 30 (twenty-third session), held out: a tied output head trained in full through LoRA's
modules_to_save, in the builders that tie their head outside the shared causal-LM tail. Family set 28 measured the
mechanism on a tied Qwen3 (peft 0.21's ModulesToSaveWrapper keeps the shared original and trains a deep [V, H] copy);
memplan refused the same request on GPT-2, GPT-Neo, GPT-BigCode, OPT, Gemma 1/2/3, Gemma 4, Mamba and T5 until the
builders resolved their head through GraphBuilder::tied_param. These rows test that on families whose heads differ:
GPT-2's Conv1D model (the head is wte), OPT's 512-wide projected embedding, a Gemma 3 with a 262k vocabulary, GPT-Neo
(eager), a multi-query BigCode, T5 v1.0 (the head is `shared`, scaled outputs), GPT-J's untied head with a bias (copied
as weight and bias), and a mixed request (lm_head and an embedding). Shapes are odd on purpose. Every row is predicted
at a commit before the call that measures it (data/validation/predictions/families30-holdout.json).
Usage: python3 tied_heads.py [ID=PREDICTED_RESERVED_MIB ...]  (JSONL; named rows get capped copies at 0.97 / 1.03)"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import capped, hf, print_cases, training  # noqa: E402

GPT2_M = {"n_embd": 1024, "n_layer": 24, "n_head": 16, "vocab_size": 50257, "n_positions": 1024}
OPT_350 = {"hidden_size": 1024, "ffn_dim": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
           "word_embed_proj_dim": 512, "do_layer_norm_before": False, "vocab_size": 50272,
           "max_position_embeddings": 2048, "pad_token_id": 1}
GEMMA3_1B_6L = {"hidden_size": 1152, "intermediate_size": 6912, "num_hidden_layers": 6, "num_attention_heads": 4,
                "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 262144, "sliding_window": 512,
                "max_position_embeddings": 32768}
GPTNEO_125 = {"hidden_size": 768, "num_layers": 12, "num_heads": 12, "attention_types": [[["global", "local"], 6]],
              "window_size": 256, "vocab_size": 50257, "max_position_embeddings": 2048}
BIGCODE_6L = {"n_embd": 2048, "n_layer": 6, "n_head": 16, "multi_query": True, "vocab_size": 49280,
              "n_positions": 2048}
T5_BASE = {"d_model": 768, "d_ff": 3072, "d_kv": 64, "num_heads": 12, "num_layers": 12, "vocab_size": 32128,
           "decoder_start_token_id": 0, "pad_token_id": 0}
GPTJ_4L = {"n_embd": 4096, "n_layer": 4, "n_head": 16, "rotary_dim": 64, "vocab_size": 50400, "n_positions": 2048,
           "tie_word_embeddings": False}


def lora(r, targets, save):
    return {"r": r, "alpha": 2 * r, "dropout": 0.05,
            "target_modules": targets if targets == "all-linear" else targets.split(","), "modules_to_save": save}


def tr(id, model_type, config, batch, seq, precision, lo, attn="sdpa", **kw):
    return training(id, hf(model_type, config, attn), batch, seq, precision, "adamw", lora=lo, **kw)


def holdout():
    return [
        tr("f30-gpt2m-bf16-r16-attn-lmhead-b5s1000", "gpt2", GPT2_M, 5, 1000, "bf16",
           lora(16, "c_attn", ["lm_head"])),
        tr("f30-opt350-ampbf16-r8-qv-lmhead-b6s700", "opt", OPT_350, 6, 700, "amp_bf16",
           lora(8, "q_proj,v_proj", ["lm_head"])),
        tr("f30-gemma3-6l-bf16-r16-all-lmhead-b3s900", "gemma3_text", GEMMA3_1B_6L, 3, 900, "bf16",
           lora(16, "all-linear", ["lm_head"])),
        tr("f30-gptneo125-fp32-r8-qv-lmhead-b6s512-eager", "gpt_neo", GPTNEO_125, 6, 512, "fp32",
           lora(8, "q_proj,v_proj", ["lm_head"]), attn="eager"),
        tr("f30-bigcode6l-bf16-r16-attn-lmhead-b3s1200-ckpt", "gpt_bigcode", BIGCODE_6L, 3, 1200, "bf16",
           lora(16, "c_attn", ["lm_head"]), ckpt=True),
        tr("f30-t5b-bf16-r8-qv-lmhead-b10s400t100", "t5", T5_BASE, 10, 400, "bf16",
           lora(8, "q,v", ["lm_head"]), target_len=100),
        tr("f30-gptj4l-bf16-r8-qv-lmhead-b2s1000-eager", "gptj", GPTJ_4L, 2, 1000, "bf16",
           lora(8, "q_proj,v_proj", ["lm_head"]), attn="eager"),
        tr("f30-gpt2m-ampbf16-r8-attn-lmhead-wpe-b6s800", "gpt2", GPT2_M, 6, 800, "amp_bf16",
           lora(8, "c_attn", ["lm_head", "wpe"])),
    ]


def caps(case, predicted_reserved_mib):
    return [capped(case, predicted_reserved_mib, f, "cap") for f in (0.97, 1.03)]


if __name__ == "__main__":
    rows = holdout()
    for c in rows:
        c["holdout"] = True
    print_cases(rows, sys.argv[1:], caps)
