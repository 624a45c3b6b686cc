#!/usr/bin/env python3
"""Thirtieth step-time set, held out (issue 17 part 3; written 2026-12-04, twenty-third session): writes
calibrate/cases/timing30-holdout-input.jsonl. The first set predicted by the fit over every timed row (cli/time_fit.h:
until this session the fit saw the 70 tuning rows only): the runs users bring most often, at batches a fine-tuning
script picks, so that the refit is judged where it matters rather than on one family. GPU-bound and host-bound steps,
checkpointing, accumulation, LoRA, fp32, a vision pair, a seq2seq step, and two served decoders (prefill and decode
per token). Pre-registered: predicted at the commit that adds it (data/validation/predictions/timing30-holdout.json),
then timed one at a time by calibrate/holdout_timing.sh.
Usage: python3 calibrate/cases/timing30/refit_check.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "timing30-holdout-input.jsonl")


def hf(mt, cfg, attn="sdpa"):
    return {"source": "huggingface", "model_type": mt, "config": cfg, "attn_implementation": attn}


def train(cid, model, prec, b, s, ckpt=False, ga=1, opt="adamw", **extra):
    c = {"id": cid, "model": model, "mode": "training", "batch_size": b, "seq_len": s, "precision": prec,
         "optimizer": opt, "optimizer_impl": "foreach", "grad_checkpointing": ckpt, "grad_accum_steps": ga}
    c.update(extra)
    if s is None:
        del c["seq_len"]
    return c


def vision(cid, name, prec, b, opt):
    return {"id": cid, "model": {"source": "torchvision", "name": name}, "mode": "training", "batch_size": b,
            "image_size": 224, "num_classes": 1000, "precision": prec, "optimizer": opt, "optimizer_impl": "foreach",
            "grad_checkpointing": False, "grad_accum_steps": 1}


def serve(cid, model, b, s, g):
    return {"id": cid, "model": model, "mode": "inference", "batch_size": b, "seq_len": s, "precision": "bf16",
            "generate_tokens": g}


# Published widths (config.json of each model), cut in depth where a full model would not be what is timed.
LLAMA32_1B = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
              "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256, "tie_word_embeddings": True,
              "rope_theta": 500000.0, "max_position_embeddings": 131072}
QWEN25_05B = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
              "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True,
              "max_position_embeddings": 32768}
QWEN25_15B = {"hidden_size": 1536, "intermediate_size": 8960, "num_hidden_layers": 28, "num_attention_heads": 12,
              "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True,
              "max_position_embeddings": 32768}
MISTRAL7B_4L = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 4, "num_attention_heads": 32,
                "num_key_value_heads": 8, "vocab_size": 32768, "max_position_embeddings": 32768,
                "sliding_window": None}
GPT2_MEDIUM = {"n_embd": 1024, "n_layer": 24, "n_head": 16, "vocab_size": 50257, "n_positions": 1024}
BERT_BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
             "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2, "pad_token_id": 0}
QWEN3_06B = {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
             "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": True,
             "max_position_embeddings": 40960}
PHI3_MINI_6L = {"hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 6, "num_attention_heads": 32,
                "num_key_value_heads": 32, "vocab_size": 32064, "max_position_embeddings": 4096}
T5_BASE = {"d_model": 768, "d_ff": 3072, "d_kv": 64, "num_heads": 12, "num_layers": 12, "vocab_size": 32128,
           "decoder_start_token_id": 0, "pad_token_id": 0}
OPT_350M = {"hidden_size": 1024, "ffn_dim": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
            "word_embed_proj_dim": 512, "do_layer_norm_before": False, "vocab_size": 50272,
            "max_position_embeddings": 2048, "pad_token_id": 1}

HOLD = [
    train("ht30-l1b-bf16-b3s2048", hf("llama", LLAMA32_1B), "bf16", 3, 2048),
    train("ht30-q05-ampbf16-b6s1024", hf("qwen2", QWEN25_05B), "amp_bf16", 6, 1024),
    train("ht30-gpt2m-ampbf16-b6s1024-ckpt", hf("gpt2", GPT2_MEDIUM), "amp_bf16", 6, 1024, ckpt=True),
    train("ht30-mis7b4l-bf16-b2s1500", hf("mistral", MISTRAL7B_4L), "bf16", 2, 1500),
    train("ht30-bertb-seqcls-ampbf16-b24s512", hf("bert", BERT_BASE), "amp_bf16", 24, 512, task="seq_cls",
          num_labels=3),
    vision("ht30-rn50-ampbf16-sgdmom-b96", "resnet50", "amp_bf16", 96, "sgd_momentum"),
    vision("ht30-vitb16-ampbf16-b48", "vit_b_16", "amp_bf16", 48, "adamw"),
    train("ht30-q3-06-bf16-r16all-b6s1024", hf("qwen3", QWEN3_06B), "bf16", 6, 1024,
          lora={"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": "all-linear"}),
    train("ht30-phi3-6l-ampbf16-b2s2048-ckpt-a2", hf("phi3", PHI3_MINI_6L), "amp_bf16", 2, 2048, ckpt=True, ga=2),
    train("ht30-t5b-bf16-b12s512t128", hf("t5", T5_BASE), "bf16", 12, 512, target_len=128),
    train("ht30-opt350-fp32-b6s512", hf("opt", OPT_350M), "fp32", 6, 512),
    serve("ht30-l1b-infer-b6s1500-g12", hf("llama", LLAMA32_1B), 6, 1500, 12),
    serve("ht30-q15-infer-b3s3000-g12", hf("qwen2", QWEN25_15B), 3, 3000, 12),
]

if __name__ == "__main__":
    with open(OUT, "w") as f:
        for c in HOLD:
            c["holdout"] = True
            f.write(json.dumps(c) + "\n")
    print(len(HOLD), "cases ->", OUT)
