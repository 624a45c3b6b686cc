#!/usr/bin/env python3
"""Family set 15 (2026-12-03, fourteenth session): tuning rows of eleven model_types memplan refused until now,
measured on the H200 before any builder exists: marian (Opus-MT), pegasus, m2m_100 (M2M-100 / NLLB), mt5, umt5,
camembert, electra, cohere2 (Command R7B), glm4_moe (GLM-4.5), gpt_neo, vit (transformers' ViTForImageClassification).
Published widths, fewer layers where the step would be large; bf16 / amp / fp32, checkpointing, accumulation,
eager, generate. Its held-out partner (family set 16) is written after the builders, predicted before measuring.
Usage: python3 make_families15.py > families15-input.jsonl"""
import json

from case_helpers import hf, inference, training

tr = training
MARIAN = {"d_model": 512, "encoder_layers": 6, "decoder_layers": 6, "encoder_attention_heads": 8,
          "decoder_attention_heads": 8, "encoder_ffn_dim": 2048, "decoder_ffn_dim": 2048, "vocab_size": 58101,
          "activation_function": "swish", "scale_embedding": True, "max_position_embeddings": 512,
          "pad_token_id": 58100, "decoder_start_token_id": 58100, "eos_token_id": 0}
MARIAN_BIG = dict(MARIAN, d_model=1024, encoder_attention_heads=16, decoder_attention_heads=16, encoder_ffn_dim=4096,
                  decoder_ffn_dim=4096, vocab_size=57059, activation_function="relu", pad_token_id=57058,
                  decoder_start_token_id=57058, encoder_layers=3, decoder_layers=3)
PEGASUS = {"d_model": 1024, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 16,
           "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096, "vocab_size": 96103,
           "activation_function": "relu", "scale_embedding": True, "max_position_embeddings": 1024,
           "pad_token_id": 0, "decoder_start_token_id": 0, "eos_token_id": 1}
NLLB = {"d_model": 1024, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 16,
        "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096, "vocab_size": 256206,
        "activation_function": "relu", "scale_embedding": True, "max_position_embeddings": 1024,
        "pad_token_id": 1, "decoder_start_token_id": 2, "eos_token_id": 2, "bos_token_id": 0}
M2M = dict(NLLB, vocab_size=128112)
MT5S = {"d_model": 512, "d_ff": 1024, "d_kv": 64, "num_heads": 6, "num_layers": 8, "num_decoder_layers": 8,
        "vocab_size": 250112, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False,
        "decoder_start_token_id": 0, "pad_token_id": 0}
MT5B = dict(MT5S, d_model=768, d_ff=2048, num_heads=12, num_layers=4, num_decoder_layers=4)
UMT5S = dict(MT5S, vocab_size=256384)
CAMEMBERT = {"num_hidden_layers": 4, "vocab_size": 32005, "max_position_embeddings": 514, "type_vocab_size": 1,
             "pad_token_id": 1, "bos_token_id": 5, "eos_token_id": 6}
ELECTRA_S = {"vocab_size": 30522, "embedding_size": 128, "hidden_size": 256, "num_hidden_layers": 12,
             "num_attention_heads": 4, "intermediate_size": 1024}
ELECTRA_B = {"vocab_size": 30522, "embedding_size": 768, "hidden_size": 768, "num_hidden_layers": 4,
             "num_attention_heads": 12, "intermediate_size": 3072}
ELECTRA_L = {"vocab_size": 30522, "embedding_size": 1024, "hidden_size": 1024, "num_hidden_layers": 3,
             "num_attention_heads": 16, "intermediate_size": 4096}
COHERE2 = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 4, "num_attention_heads": 32,
           "num_key_value_heads": 8, "vocab_size": 256000, "sliding_window": 4096}
COHERE2_SW = {"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 4, "num_attention_heads": 16,
              "num_key_value_heads": 4, "vocab_size": 256000, "sliding_window": 512}
GLM4MOE = {"hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 768, "num_hidden_layers": 3,
           "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128, "n_routed_experts": 32,
           "num_experts_per_tok": 8, "n_shared_experts": 1, "first_k_dense_replace": 1, "vocab_size": 151552,
           "attention_bias": True, "partial_rotary_factor": 0.5}
GLM4MOE_QK = dict(GLM4MOE, use_qk_norm=True, n_group=4, topk_group=2)
GPTNEO125 = {"hidden_size": 768, "num_layers": 12, "num_heads": 12, "attention_types": [[["global", "local"], 6]],
             "window_size": 256, "vocab_size": 50257, "max_position_embeddings": 2048}
GPTNEO13 = {"hidden_size": 2048, "num_layers": 4, "num_heads": 16, "attention_types": [[["global", "local"], 2]],
            "window_size": 256, "vocab_size": 50257, "max_position_embeddings": 2048}
VITB = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
        "image_size": 224, "patch_size": 16, "num_labels": 1000}
VITL = {"hidden_size": 1024, "num_hidden_layers": 6, "num_attention_heads": 16, "intermediate_size": 4096,
        "image_size": 224, "patch_size": 16, "num_labels": 1000}
VIT384 = dict(VITB, num_hidden_layers=6, image_size=384, num_labels=10)


def vit(id, cfg, b, prec, attn="sdpa", **kw):
    c = tr(id, hf("vit", cfg, attn), b, 0, prec, "adamw", **kw)
    del c["seq_len"]
    return c


CASES = [
    tr("f15-marian-bf16-b16s256t256", hf("marian", MARIAN), 16, 256, "bf16", "adamw", target_len=256),
    tr("f15-marian-ampfp16-b24s200t200-ckpt", hf("marian", MARIAN), 24, 200, "amp_fp16", "adamw", ckpt=True,
       target_len=200),
    inference("f15-marian-infer-bf16-b8s128-g32", hf("marian", MARIAN), 8, 128, "bf16", 32),
    tr("f15-marianbig-fp32-b4s512t128-eager", hf("marian", MARIAN_BIG, "eager"), 4, 512, "fp32", "adamw",
       target_len=128),
    tr("f15-pegasus-bf16-b4s1024t256", hf("pegasus", PEGASUS), 4, 1024, "bf16", "adamw", target_len=256),
    tr("f15-pegasus-ampbf16-b8s512t128-ckpt", hf("pegasus", PEGASUS), 8, 512, "amp_bf16", "adamw", ckpt=True,
       target_len=128),
    inference("f15-pegasus-infer-bf16-b4s512-g16", hf("pegasus", PEGASUS), 4, 512, "bf16", 16),
    tr("f15-nllb-bf16-b8s256t256", hf("m2m_100", NLLB), 8, 256, "bf16", "adamw", target_len=256),
    tr("f15-nllb-ampfp16-b4s512t512", hf("m2m_100", NLLB), 4, 512, "amp_fp16", "adamw", target_len=512),
    inference("f15-m2m-infer-bf16-b8s256-g16", hf("m2m_100", M2M), 8, 256, "bf16", 16),
    tr("f15-m2m-fp32-b2s512t128-ckpt", hf("m2m_100", M2M), 2, 512, "fp32", "adamw", ckpt=True, target_len=128),
    tr("f15-mt5s-bf16-b8s512t128", hf("mt5", MT5S), 8, 512, "bf16", "adamw", target_len=128),
    tr("f15-mt5s-ampbf16-b16s256t64", hf("mt5", MT5S), 16, 256, "amp_bf16", "adamw", target_len=64),
    tr("f15-mt5b-fp32-b2s512t128", hf("mt5", MT5B), 2, 512, "fp32", "adamw", target_len=128),
    inference("f15-mt5-infer-bf16-b4s512-g16", hf("mt5", MT5S), 4, 512, "bf16", 16),
    tr("f15-umt5s-bf16-b8s512t128", hf("umt5", UMT5S), 8, 512, "bf16", "adamw", target_len=128),
    tr("f15-umt5s-ampfp16-b4s1024t256-ckpt", hf("umt5", UMT5S), 4, 1024, "amp_fp16", "adamw", ckpt=True,
       target_len=256),
    tr("f15-camembert-ampbf16-b16s512", hf("camembert", CAMEMBERT), 16, 512, "amp_bf16", "adamw"),
    tr("f15-camembert-seqcls-bf16-b32s256", hf("camembert", CAMEMBERT), 32, 256, "bf16", "adamw", task="seq_cls",
       num_labels=3),
    tr("f15-electras-mlm-bf16-b32s512", hf("electra", ELECTRA_S), 32, 512, "bf16", "adamw"),
    tr("f15-electrab-seqcls-ampfp16-b16s512", hf("electra", ELECTRA_B), 16, 512, "amp_fp16", "adamw",
       task="seq_cls", num_labels=2),
    tr("f15-electral-tokcls-fp32-b4s512-ckpt", hf("electra", ELECTRA_L), 4, 512, "fp32", "adamw", ckpt=True,
       task="token_cls", num_labels=9),
    tr("f15-cohere2-bf16-b1s2048", hf("cohere2", COHERE2), 1, 2048, "bf16", "adamw", _est_gib=40),
    tr("f15-cohere2sw-ampbf16-b2s1024", hf("cohere2", COHERE2_SW), 2, 1024, "amp_bf16", "adamw"),
    inference("f15-cohere2sw-infer-bf16-b4s1024-g16", hf("cohere2", COHERE2_SW), 4, 1024, "bf16", 16),
    tr("f15-cohere2sw-fp32-b1s1000-eager", hf("cohere2", COHERE2_SW, "eager"), 1, 1000, "fp32", "adamw"),
    tr("f15-glm4moe-bf16-b2s2048", hf("glm4_moe", GLM4MOE), 2, 2048, "bf16", "adamw"),
    tr("f15-glm4moeqk-ampbf16-b2s1024-ckpt", hf("glm4_moe", GLM4MOE_QK), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    inference("f15-glm4moe-infer-bf16-b4s512-g16", hf("glm4_moe", GLM4MOE), 4, 512, "bf16", 16),
    tr("f15-glm4moe-fp32-b1s512-eager", hf("glm4_moe", GLM4MOE, "eager"), 1, 512, "fp32", "adamw"),
    tr("f15-gptneo125-bf16-b8s1024-eager", hf("gpt_neo", GPTNEO125, "eager"), 8, 1024, "bf16", "adamw"),
    tr("f15-gptneo13-ampfp16-b2s2048-ckpt-eager", hf("gpt_neo", GPTNEO13, "eager"), 2, 2048, "amp_fp16", "adamw",
       ckpt=True),
    inference("f15-gptneo-infer-bf16-b4s512-g16-eager", hf("gpt_neo", GPTNEO125, "eager"), 4, 512, "bf16", 16),
    tr("f15-gptneo-fp32-b4s512-acc2-eager", hf("gpt_neo", GPTNEO125, "eager"), 4, 512, "fp32", "adamw", accum=2),
    vit("f15-vitb-ampbf16-b64", VITB, 64, "amp_bf16"),
    vit("f15-vitb-bf16-b32-ckpt", VITB, 32, "bf16", ckpt=True),
    vit("f15-vitl-fp32-b8-eager", VITL, 8, "fp32", "eager"),
    vit("f15-vit384-ampfp16-b16", VIT384, 16, "amp_fp16"),
]

if __name__ == "__main__":
    for c in CASES:
        print(json.dumps(c))
