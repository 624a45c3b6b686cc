#!/usr/bin/env python3
"""Family set 14 (2026-12-03, thirteenth session): the held-out set of family set 13, on other widths, shapes and
settings (odd batches and lengths, GradScaler, accumulation, checkpointing, eager), predicted at a named commit
before it is measured (data/validation/predictions/families14-holdout.json). The helpers who wrote the builders
were told these configurations (so nothing is refused) but never their numbers.
Usage: python3 make_families14.py > families14-holdout-input.jsonl"""
import json

from case_helpers import hf, inference, training

tr = training
MISTRAL7 = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 1, "num_attention_heads": 32,
            "num_key_value_heads": 8, "vocab_size": 32000, "pad_token_id": 0}
QWEN05 = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 4, "num_attention_heads": 14,
          "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True, "pad_token_id": 151643}
LLAMA1B = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 3, "num_attention_heads": 32,
           "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": True, "pad_token_id": 128004}
GPT2M = {"n_embd": 1024, "n_head": 16, "n_layer": 4, "pad_token_id": 50256}
QWEN3 = {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 3, "num_attention_heads": 16,
         "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": True,
         "pad_token_id": 151643}
BERT = {"num_hidden_layers": 4}
BERT_LARGE = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 4, "num_attention_heads": 16}
XLMR = {"num_hidden_layers": 3, "vocab_size": 250002, "max_position_embeddings": 514, "type_vocab_size": 1,
        "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
ROBERTA = {"num_hidden_layers": 3, "vocab_size": 50265, "max_position_embeddings": 514, "type_vocab_size": 1,
           "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
MODERNBERT = {"hidden_size": 768, "intermediate_size": 1152, "num_hidden_layers": 4, "num_attention_heads": 12,
              "vocab_size": 50368}
MODERNBERT_L = {"hidden_size": 1024, "intermediate_size": 2624, "num_hidden_layers": 4, "num_attention_heads": 16,
                "vocab_size": 50368}
DEBERTA = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 3, "num_attention_heads": 12,
           "vocab_size": 128100, "relative_attention": True, "pos_att_type": ["p2c", "c2p"], "position_buckets": 256,
           "max_relative_positions": -1, "norm_rel_ebd": "layer_norm", "share_att_key": True,
           "position_biased_input": False, "max_position_embeddings": 512, "type_vocab_size": 0}
DEBERTA_L = dict(DEBERTA, hidden_size=1024, intermediate_size=4096, num_hidden_layers=2, num_attention_heads=16)
GRANITE3B = {"hidden_size": 1536, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 24,
             "num_key_value_heads": 8, "num_local_experts": 40, "num_experts_per_tok": 8, "vocab_size": 49155}
GRANITEMOE = {"hidden_size": 1024, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 16,
              "num_key_value_heads": 8, "num_local_experts": 32, "num_experts_per_tok": 8, "vocab_size": 49155}
GRANITESHARED = dict(GRANITEMOE, shared_intermediate_size=1024)
LLAMA4 = {"hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_hidden_layers": 2,
          "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048,
          "num_local_experts": 16, "attention_chunk_size": 1024}
LLAMA4_INT2 = dict(LLAMA4, interleave_moe_layer_step=2, attention_chunk_size=8192)
LLAMA4_SMALL = {"hidden_size": 1024, "intermediate_size": 2048, "intermediate_size_mlp": 4096,
                "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
                "vocab_size": 32000, "num_local_experts": 4}
LLAMA4_INF = dict(LLAMA4, num_hidden_layers=4, num_local_experts=8)
BART_LARGE = {"d_model": 1024, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 16,
              "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096, "vocab_size": 50265}
BART_BASE = {"d_model": 768, "encoder_layers": 3, "decoder_layers": 3, "encoder_attention_heads": 12,
             "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072, "vocab_size": 50265}
MBART50 = {"d_model": 1024, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 16,
           "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096, "vocab_size": 250054,
           "scale_embedding": True}
WHISPER_MED = {"d_model": 1024, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 16,
               "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096,
               "vocab_size": 51865, "num_mel_bins": 80}
WHISPER_SMALL = {"d_model": 768, "encoder_layers": 3, "decoder_layers": 3, "encoder_attention_heads": 12,
                 "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
                 "vocab_size": 51865, "num_mel_bins": 80}
WHISPER_LARGE3 = {"d_model": 1280, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 20,
                  "decoder_attention_heads": 20, "encoder_ffn_dim": 5120, "decoder_ffn_dim": 5120,
                  "vocab_size": 51866, "num_mel_bins": 128}
HUNYUAN7 = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 1, "num_attention_heads": 32,
            "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 128167}
HUNYUAN = {"hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 2, "num_attention_heads": 16,
           "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 120818, "tie_word_embeddings": True}
APERTUS70 = {"hidden_size": 8192, "intermediate_size": 43008, "num_hidden_layers": 1, "num_attention_heads": 64,
             "num_key_value_heads": 8, "vocab_size": 131072}
APERTUS = {"hidden_size": 4096, "intermediate_size": 21504, "num_hidden_layers": 2, "num_attention_heads": 32,
           "num_key_value_heads": 8, "vocab_size": 131072}


def cls(id, model, b, s, prec, task, nl, **kw):
    return tr(id, model, b, s, prec, "adamw", task=task, num_labels=nl, **kw)


CASES = [
    cls("f14-mistral7-seqcls-bf16-b2s2048", hf("mistral", MISTRAL7), 2, 2048, "bf16", "seq_cls", 2),
    cls("f14-qwen2-tokcls-ampfp16-b8s256", hf("qwen2", QWEN05), 8, 256, "amp_fp16", "token_cls", 5),
    cls("f14-llama-seqcls-fp32-b3s1000", hf("llama", LLAMA1B), 3, 1000, "fp32", "seq_cls", 7),
    cls("f14-gpt2m-seqcls-ampbf16-b12s500-ckpt", hf("gpt2", GPT2M), 12, 500, "amp_bf16", "seq_cls", 3, ckpt=True),
    cls("f14-qwen3-seqcls-ampbf16-b6s384-acc2", hf("qwen3", QWEN3), 6, 384, "amp_bf16", "seq_cls", 2, accum=2),
    cls("f14-bert-seqcls-bf16-b24s384", hf("bert", BERT), 24, 384, "bf16", "seq_cls", 2),
    cls("f14-xlmr-tokcls-ampbf16-b8s512", hf("xlm-roberta", XLMR), 8, 512, "amp_bf16", "token_cls", 9),
    cls("f14-roberta-seqcls-ampfp16-b12s500", hf("roberta", ROBERTA), 12, 500, "amp_fp16", "seq_cls", 4),
    cls("f14-distilbert-seqcls-ampfp16-b48s128", hf("distilbert", {"n_layers": 3}), 48, 128, "amp_fp16", "seq_cls",
        2),
    cls("f14-modernbertl-seqcls-bf16-b8s1024", hf("modernbert", MODERNBERT_L), 8, 1024, "bf16", "seq_cls", 3),
    cls("f14-modernbert-tokcls-ampbf16-b6s2000", hf("modernbert", MODERNBERT), 6, 2000, "amp_bf16", "token_cls", 9),
    cls("f14-bertl-tokcls-fp32-b4s512-ckpt", hf("bert", BERT_LARGE), 4, 512, "fp32", "token_cls", 9, ckpt=True),
    cls("f14-debertal-seqcls-ampbf16-b8s512-eager", hf("deberta-v2", DEBERTA_L, "eager"), 8, 512, "amp_bf16",
        "seq_cls", 2),
    tr("f14-deberta-mlm-fp32-b6s384-eager", hf("deberta-v2", DEBERTA, "eager"), 6, 384, "fp32", "adamw"),
    cls("f14-deberta-tokcls-bf16-b12s256-eager", hf("deberta-v2", DEBERTA, "eager"), 12, 256, "bf16", "token_cls", 5),
    cls("f14-deberta-seqcls-ampfp16-b16s512-ckpt-eager", hf("deberta-v2", DEBERTA, "eager"), 16, 512, "amp_fp16",
        "seq_cls", 3, ckpt=True),
    tr("f14-granite3b-bf16-b2s2048", hf("granitemoe", GRANITE3B), 2, 2048, "bf16", "adamw"),
    tr("f14-granitemoeshared-ampbf16-b3s1000", hf("granitemoeshared", GRANITESHARED), 3, 1000, "amp_bf16", "adamw"),
    tr("f14-granitemoe-fp32-b1s512-eager", hf("granitemoe", GRANITEMOE, "eager"), 1, 512, "fp32", "adamw"),
    inference("f14-granitemoeshared-infer-bf16-b4s512-g16", hf("granitemoeshared", GRANITESHARED), 4, 512, "bf16",
              16),
    tr("f14-llama4-bf16-b1s4096-chunk1024", hf("llama4_text", LLAMA4), 1, 4096, "bf16", "adamw", _est_gib=85),
    tr("f14-llama4-int2-ampbf16-b2s1024-ckpt", hf("llama4_text", LLAMA4_INT2), 2, 1024, "amp_bf16", "adamw",
       ckpt=True, _est_gib=100),
    dict(inference("f14-llama4-infer-bf16-b4s2048-g16-chunk1024", hf("llama4_text", LLAMA4_INF), 4, 2048, "bf16", 16),
         _est_gib=45),
    tr("f14-llama4small-fp32-b1s512-eager", hf("llama4_text", LLAMA4_SMALL, "eager"), 1, 512, "fp32", "adamw"),
    tr("f14-bartl-fp32-b4s1024t256-ckpt", hf("bart", BART_LARGE), 4, 1024, "fp32", "adamw", ckpt=True,
       target_len=256),
    tr("f14-bartb-ampfp16-b12s500t100", hf("bart", BART_BASE), 12, 500, "amp_fp16", "adamw", target_len=100),
    inference("f14-bartl-infer-bf16-b8s512-g16", hf("bart", BART_LARGE), 8, 512, "bf16", 16),
    tr("f14-bartl-bf16-b6s384t64-eager", hf("bart", BART_LARGE, "eager"), 6, 384, "bf16", "adamw", target_len=64),
    tr("f14-mbart-bf16-b4s1024t256", hf("mbart", MBART50), 4, 1024, "bf16", "adamw", target_len=256),
    tr("f14-whisperm-ampfp16-b8t448", hf("whisper", WHISPER_MED), 8, 3000, "amp_fp16", "adamw", target_len=448),
    tr("f14-whispers-bf16-b24t100-eager", hf("whisper", WHISPER_SMALL, "eager"), 24, 3000, "bf16", "adamw",
       target_len=100),
    tr("f14-whisperl3-ampbf16-b4t300-ckpt", hf("whisper", WHISPER_LARGE3), 4, 3000, "amp_bf16", "adamw", ckpt=True,
       target_len=300),
    tr("f14-hunyuan7-bf16-b1s4096", hf("hunyuan_v1_dense", HUNYUAN7), 1, 4096, "bf16", "adamw"),
    tr("f14-hunyuan-fp32-b2s512-eager", hf("hunyuan_v1_dense", HUNYUAN, "eager"), 2, 512, "fp32", "adamw"),
    tr("f14-apertus70-bf16-b1s2048", hf("apertus", APERTUS70), 1, 2048, "bf16", "adamw", _est_gib=40),
    inference("f14-apertus-infer-bf16-b4s1024-g8", hf("apertus", APERTUS), 4, 1024, "bf16", 8),
    tr("f14-apertus-ampfp16-b3s1000-acc2", hf("apertus", APERTUS), 3, 1000, "amp_fp16", "adamw", accum=2, _est_gib=45),
]

if __name__ == "__main__":
    for c in CASES:
        c["holdout"] = True
        print(json.dumps(c))
