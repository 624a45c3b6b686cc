#!/usr/bin/env python3
"""Family set 8 (2026-12-02, eleventh session): held out for qwen2_moe, opt and roberta / xlm-roberta, predicted at
a named commit before it is measured (family set 7's rows are what the builders were written against). Other
widths (a Qwen2-57B-A14B-like layer with GQA, OPT-6.7B- and OPT-125M-shaped models, roberta-large and
xlm-roberta-large whole), odd batch sizes and lengths, amp fp16 with accumulation, checkpointing, eager attention,
LoRA on OPT, a sparse step of 2 with renormalised routing, and inference with 16 generated tokens.
Usage: python3 make_families8.py MEMORY.jsonl TIMING.jsonl"""
import sys

from case_helpers import hf, inference, training, write_holdout

tr = training
Q2_57B = {"hidden_size": 3584, "intermediate_size": 18944, "moe_intermediate_size": 2560,
          "shared_expert_intermediate_size": 20480, "num_experts": 64, "num_experts_per_tok": 8,
          "num_hidden_layers": 2, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 151936}
Q2_STEP2 = {"hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
            "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 32000,
            "decoder_sparse_step": 2, "norm_topk_prob": True}
OPT67 = {"hidden_size": 4096, "ffn_dim": 16384, "num_hidden_layers": 3, "num_attention_heads": 32,
         "vocab_size": 50272, "max_position_embeddings": 2048, "word_embed_proj_dim": 4096}
OPT125 = {"hidden_size": 768, "ffn_dim": 3072, "num_hidden_layers": 12, "num_attention_heads": 12,
          "vocab_size": 50272, "max_position_embeddings": 2048, "word_embed_proj_dim": 768}
OPT350 = {"hidden_size": 1024, "ffn_dim": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
          "vocab_size": 50272, "max_position_embeddings": 2048, "word_embed_proj_dim": 512,
          "do_layer_norm_before": False}
OPT13 = {"hidden_size": 2048, "ffn_dim": 8192, "num_hidden_layers": 6, "num_attention_heads": 32,
         "vocab_size": 50272, "max_position_embeddings": 2048, "word_embed_proj_dim": 2048}
RL = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
      "vocab_size": 50265, "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1,
      "bos_token_id": 0, "eos_token_id": 2}
RB = dict(RL, hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12)
XLMR_L = dict(RL, vocab_size=250002)

MEMORY = [
    tr("f8-q2moe57-bf16-adamw-b1s2048", hf("qwen2_moe", Q2_57B), 1, 2048, "bf16", "adamw"),
    tr("f8-q2moe-step2-ampfp16-adamw-b3s1000-acc2", hf("qwen2_moe", Q2_STEP2), 3, 1000, "amp_fp16", "adamw",
       accum=2),
    inference("f8-q2moe57-infer-bf16-b2s1500-g16", hf("qwen2_moe", Q2_57B), 2, 1500, "bf16", 16),
    tr("f8-opt67-ampfp16-adamw-b3s1000-acc2", hf("opt", OPT67), 3, 1000, "amp_fp16", "adamw", accum=2),
    tr("f8-opt125-fp32-sgdmom-b6s2048-eager", hf("opt", OPT125, "eager"), 6, 2048, "fp32", "sgd_momentum"),
    tr("f8-opt350-bf16-adamw-b6s1024-ckpt", hf("opt", OPT350), 6, 1024, "bf16", "adamw", ckpt=True),
    tr("f8-opt13-ampbf16-lora16-qv-b4s1024", hf("opt", OPT13), 4, 1024, "amp_bf16", "adamw",
       lora={"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": ["q_proj", "v_proj"]}),
    inference("f8-opt13-infer-bf16-b8s1500-g16", hf("opt", OPT13), 8, 1500, "bf16", 16),
    tr("f8-robertal-ampbf16-adamw-b8s512-ckpt", hf("roberta", RL), 8, 512, "amp_bf16", "adamw", ckpt=True),
    tr("f8-robertab-ampfp16-adamw-b12s384-acc2", hf("roberta", RB), 12, 384, "amp_fp16", "adamw", accum=2),
    tr("f8-robertab-fp32-adamw-b6s500-eager", hf("roberta", RB, "eager"), 6, 500, "fp32", "adamw"),
    tr("f8-xlmrl-ampbf16-adamw-b4s512", hf("xlm-roberta", XLMR_L), 4, 512, "amp_bf16", "adamw"),
]
TIMED = ["f8-q2moe57-bf16-adamw-b1s2048", "f8-opt67-ampfp16-adamw-b3s1000-acc2", "f8-opt350-bf16-adamw-b6s1024-ckpt",
         "f8-robertal-ampbf16-adamw-b8s512-ckpt"]

if __name__ == "__main__":
    write_holdout(sys.argv[1], [dict(c) for c in MEMORY])
    write_holdout(sys.argv[2], [dict(c, id="ht17-" + c["id"][3:]) for c in MEMORY if c["id"] in TIMED])
