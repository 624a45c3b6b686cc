#!/usr/bin/env python3
"""Family set 10 (2026-12-03, twelfth session): the held-out set of family set 9's families (smollm3, olmo, glm4,
nemotron, gpt_bigcode, gptj, falcon, bloom, olmoe, distilbert) on other widths, batch shapes (odd batches and
lengths) and options than the tuning rows: amp fp16 with accumulation, fp32 eager, checkpointing, LoRA, generation
of 16 tokens, the options each family's config has that set 9 left at their defaults (smollm3 untied with 8 layers,
gpt_bigcode multi-head, Falcon-11B's grouped kv, OLMoE's clip_qkv and renormalised routing, multilingual
distilbert). Predicted at a named commit before it is measured (data/validation/predictions/families10-holdout.json).
Ten training rows, one a family, are also timed one at a time (held-out step-time set 18, ids ht18-...).
Usage: python3 make_families10.py families10-holdout-input.jsonl timing18-holdout-input.jsonl"""
import sys

from case_helpers import hf, inference, training, write_holdout

tr = training
SMOLLM3_8L = {"hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 8, "num_attention_heads": 16,
              "num_key_value_heads": 4, "vocab_size": 128256, "tie_word_embeddings": False}
OLMO7 = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 2, "num_attention_heads": 32,
         "vocab_size": 50304}
OLMO1 = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 3, "num_attention_heads": 16,
         "vocab_size": 50304, "clip_qkv": 6.0}
GLM4_32 = {"hidden_size": 6144, "intermediate_size": 23040, "num_hidden_layers": 1, "num_attention_heads": 48,
           "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151552, "attention_bias": True}
GLM4_SMALL = {"hidden_size": 2048, "intermediate_size": 6912, "num_hidden_layers": 3, "num_attention_heads": 16,
              "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 151552, "attention_bias": True}
NEMOTRON8 = {"hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 2, "num_attention_heads": 48,
             "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 256000}
BIGCODE_STAR = {"n_embd": 6144, "n_layer": 1, "n_head": 48, "vocab_size": 49152, "n_positions": 8192,
                "multi_query": True}
BIGCODE_MHA = {"n_embd": 1024, "n_layer": 6, "n_head": 16, "vocab_size": 50257, "n_positions": 1024,
               "multi_query": False}
GPTJ_SMALL = {"n_embd": 2048, "n_layer": 3, "n_head": 16, "rotary_dim": 64, "vocab_size": 50400, "n_positions": 2048}
FALCON11 = {"hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32, "num_kv_heads": 8,
            "vocab_size": 65024, "parallel_attn": True, "bias": False, "new_decoder_architecture": True}
FALCON7 = {"hidden_size": 4544, "num_hidden_layers": 2, "num_attention_heads": 71, "vocab_size": 65024,
           "multi_query": True, "parallel_attn": True, "bias": False, "new_decoder_architecture": False}
BLOOM7 = {"hidden_size": 4096, "n_layer": 2, "n_head": 32, "vocab_size": 250880}
BLOOM560 = {"hidden_size": 1024, "n_layer": 3, "n_head": 16, "vocab_size": 250880}
OLMOE_CLIP = {"hidden_size": 2048, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 16,
              "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 50304,
              "clip_qkv": 8.0, "norm_topk_prob": True}
OLMOE = {"hidden_size": 2048, "intermediate_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 16,
         "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 50304}
DISTILBERT_ML = {"dim": 768, "hidden_dim": 3072, "n_layers": 6, "n_heads": 12, "vocab_size": 119547}
DISTILBERT = {"dim": 768, "hidden_dim": 3072, "n_layers": 6, "n_heads": 12, "vocab_size": 30522}

CASES = [
    tr("f10-smollm3-8l-ampfp16-adamw-b3s1000-acc2", hf("smollm3", SMOLLM3_8L), 3, 1000, "amp_fp16", "adamw",
       accum=2),
    inference("f10-smollm3-8l-infer-bf16-b2s2048-g16", hf("smollm3", SMOLLM3_8L), 2, 2048, "bf16", 16),
    tr("f10-olmo7-bf16-adamw-b1s2048", hf("olmo", OLMO7), 1, 2048, "bf16", "adamw"),
    tr("f10-olmo-clip-fp32-sgdmom-b2s500-eager", hf("olmo", OLMO1, "eager"), 2, 500, "fp32", "sgd_momentum"),
    tr("f10-glm4-32-bf16-adamw-b1s2048", hf("glm4", GLM4_32), 1, 2048, "bf16", "adamw"),
    tr("f10-glm4-small-fp32-adamw-b3s500-eager", hf("glm4", GLM4_SMALL, "eager"), 3, 500, "fp32", "adamw"),
    tr("f10-glm4-small-lora-qv-bf16-b4s1024", hf("glm4", GLM4_SMALL), 4, 1024, "bf16", "adamw",
       lora={"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": ["q_proj", "v_proj"]}),
    tr("f10-nemotron8-ampfp16-adamw-b2s1000-acc2", hf("nemotron", NEMOTRON8), 2, 1000, "amp_fp16", "adamw", accum=2),
    inference("f10-nemotron8-infer-bf16-b2s1024-g16", hf("nemotron", NEMOTRON8), 2, 1024, "bf16", 16),
    tr("f10-bigcode-star-bf16-adamw-b1s2048", hf("gpt_bigcode", BIGCODE_STAR), 1, 2048, "bf16", "adamw"),
    tr("f10-bigcode-mha-ampfp16-adamw-b6s1000", hf("gpt_bigcode", BIGCODE_MHA), 6, 1000, "amp_fp16", "adamw"),
    inference("f10-bigcode-mha-infer-fp32-b8s512-g16", hf("gpt_bigcode", BIGCODE_MHA), 8, 512, "fp32", 16),
    tr("f10-gptj-small-fp32-adamw-b2s512-eager", hf("gptj", GPTJ_SMALL, "eager"), 2, 512, "fp32", "adamw"),
    tr("f10-gptj-small-ampfp16-adamw-b3s1000-eager-acc2", hf("gptj", GPTJ_SMALL, "eager"), 3, 1000, "amp_fp16",
       "adamw", accum=2),
    tr("f10-falcon11-bf16-adamw-b2s2048", hf("falcon", FALCON11), 2, 2048, "bf16", "adamw"),
    tr("f10-falcon7-ampbf16-adamw-b3s1000-ckpt", hf("falcon", FALCON7), 3, 1000, "amp_bf16", "adamw", ckpt=True),
    inference("f10-falcon11-infer-bf16-b4s512-g16", hf("falcon", FALCON11), 4, 512, "bf16", 16),
    tr("f10-bloom7-bf16-adamw-b1s2048-eager", hf("bloom", BLOOM7, "eager"), 1, 2048, "bf16", "adamw"),
    tr("f10-bloom-ampfp16-adamw-b6s500-eager-ckpt", hf("bloom", BLOOM560, "eager"), 6, 500, "amp_fp16", "adamw",
       ckpt=True),
    tr("f10-olmoe-clip-bf16-adamw-b1s2048", hf("olmoe", OLMOE_CLIP), 1, 2048, "bf16", "adamw"),
    tr("f10-olmoe-ampfp16-adamw-b3s1000-acc2", hf("olmoe", OLMOE), 3, 1000, "amp_fp16", "adamw", accum=2),
    tr("f10-distilbert-ml-ampbf16-adamw-b24s384", hf("distilbert", DISTILBERT_ML), 24, 384, "amp_bf16", "adamw"),
    tr("f10-distilbert-fp32-sgdmom-b12s500-eager", hf("distilbert", DISTILBERT, "eager"), 12, 500, "fp32",
       "sgd_momentum"),
    tr("f10-distilbert-ampfp16-adamw-b10s512-ckpt", hf("distilbert", DISTILBERT), 10, 512, "amp_fp16", "adamw",
       ckpt=True),
]

TIMED = ["f10-smollm3-8l-ampfp16-adamw-b3s1000-acc2", "f10-olmo7-bf16-adamw-b1s2048", "f10-glm4-32-bf16-adamw-b1s2048",
         "f10-nemotron8-ampfp16-adamw-b2s1000-acc2", "f10-bigcode-star-bf16-adamw-b1s2048",
         "f10-gptj-small-ampfp16-adamw-b3s1000-eager-acc2", "f10-falcon11-bf16-adamw-b2s2048",
         "f10-bloom7-bf16-adamw-b1s2048-eager", "f10-olmoe-clip-bf16-adamw-b1s2048",
         "f10-distilbert-ml-ampbf16-adamw-b24s384"]

if __name__ == "__main__":
    write_holdout(sys.argv[1], [dict(c) for c in CASES])
    write_holdout(sys.argv[2], [dict(c, id="ht18-" + c["id"][4:]) for c in CASES if c["id"] in TIMED])
