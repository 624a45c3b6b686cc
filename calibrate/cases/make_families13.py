#!/usr/bin/env python3
"""Family set 13 (2026-12-03, thirteenth session), measured before any of it is modelled (tuning rows the builders
are written against; held-out set 14 on other shapes follows):
- task heads: sequence and token classification (AutoModelFor{Sequence,Token}Classification, `task` and
  `num_labels`) on decoders (llama, qwen2, qwen3, gpt2: the last non-pad token's logits) and encoders (bert,
  roberta, distilbert, modernbert, deberta-v2);
- encoder-decoders: bart, mbart (AutoModelForSeq2SeqLM) and whisper (AutoModelForSpeechSeq2Seq: `seq_len` is the
  log-mel frames, 2 x max_source_positions);
- decoders: llama4_text (Llama-4 Scout / Maverick text model: MoE with a shared expert, chunked attention, NoPE
  layers), granitemoe (inference) and granitemoeshared, hunyuan_v1_dense, apertus.
Widths follow published checkpoints with few layers.
Usage: python3 make_families13.py > families13-input.jsonl"""
import json

from case_helpers import hf, inference, training

tr = training
LLAMA1B = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 4, "num_attention_heads": 32,
           "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": True, "pad_token_id": 0}
QWEN05 = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 4, "num_attention_heads": 14,
          "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True, "pad_token_id": 151643}
QWEN3 = {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 4, "num_attention_heads": 16,
         "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": True,
         "pad_token_id": 151643}
GPT2 = {"n_layer": 4, "pad_token_id": 50256}
BERT = {"num_hidden_layers": 4}
ROBERTA = {"num_hidden_layers": 4, "vocab_size": 50265, "max_position_embeddings": 514, "type_vocab_size": 1,
           "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
DISTIL = {"n_layers": 4}
MODERNBERT = {"hidden_size": 768, "intermediate_size": 1152, "num_hidden_layers": 6, "num_attention_heads": 12,
              "vocab_size": 50368}
DEBERTA = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 4, "num_attention_heads": 12,
           "vocab_size": 128100, "relative_attention": True, "pos_att_type": ["p2c", "c2p"], "position_buckets": 256,
           "max_relative_positions": -1, "norm_rel_ebd": "layer_norm", "share_att_key": True,
           "position_biased_input": False, "max_position_embeddings": 512, "type_vocab_size": 0}
BART_BASE = {"d_model": 768, "encoder_layers": 3, "decoder_layers": 3, "encoder_attention_heads": 12,
             "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072, "vocab_size": 50265}
BART_LARGE = {"d_model": 1024, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 16,
              "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096, "vocab_size": 50265}
MBART50 = {"d_model": 1024, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 16,
           "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096, "vocab_size": 250054,
           "scale_embedding": True}
WHISPER_SMALL = {"d_model": 768, "encoder_layers": 4, "decoder_layers": 4, "encoder_attention_heads": 12,
                 "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
                 "vocab_size": 51865, "num_mel_bins": 80}
WHISPER_LARGE3 = {"d_model": 1280, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 20,
                  "decoder_attention_heads": 20, "encoder_ffn_dim": 5120, "decoder_ffn_dim": 5120,
                  "vocab_size": 51866, "num_mel_bins": 128}
LLAMA4 = {"hidden_size": 5120, "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_hidden_layers": 4,
          "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048,
          "num_local_experts": 8}
LLAMA4_MAV = dict(LLAMA4, num_local_experts=4, interleave_moe_layer_step=2, attention_chunk_size=512)
GRANITEMOE = {"hidden_size": 1024, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 16,
              "num_key_value_heads": 8, "num_local_experts": 32, "num_experts_per_tok": 8, "vocab_size": 49155}
GRANITESHARED = dict(GRANITEMOE, shared_intermediate_size=1024)
HUNYUAN = {"hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 4, "num_attention_heads": 16,
           "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 120818, "tie_word_embeddings": True}
APERTUS = {"hidden_size": 4096, "intermediate_size": 21504, "num_hidden_layers": 2, "num_attention_heads": 32,
           "num_key_value_heads": 8, "vocab_size": 131072}


def cls(id, model, b, s, prec, task, nl, **kw):
    return tr(id, model, b, s, prec, "adamw", task=task, num_labels=nl, **kw)


CASES = [
    cls("f13-llama-seqcls-bf16-b8s512", hf("llama", LLAMA1B), 8, 512, "bf16", "seq_cls", 2),
    cls("f13-llama-seqcls-ampbf16-b4s1024-ckpt", hf("llama", LLAMA1B), 4, 1024, "amp_bf16", "seq_cls", 5, ckpt=True),
    cls("f13-llama-tokcls-ampbf16-b4s512", hf("llama", LLAMA1B), 4, 512, "amp_bf16", "token_cls", 9),
    cls("f13-qwen2-seqcls-fp32-b4s512", hf("qwen2", QWEN05), 4, 512, "fp32", "seq_cls", 3),
    cls("f13-qwen3-seqcls-bf16-b4s1024", hf("qwen3", QWEN3), 4, 1024, "bf16", "seq_cls", 2),
    cls("f13-gpt2-seqcls-fp32-b8s512", hf("gpt2", GPT2), 8, 512, "fp32", "seq_cls", 2),
    cls("f13-gpt2-seqcls-ampfp16-b16s256", hf("gpt2", GPT2), 16, 256, "amp_fp16", "seq_cls", 4),
    cls("f13-bert-seqcls-fp32-b16s512", hf("bert", BERT), 16, 512, "fp32", "seq_cls", 2),
    cls("f13-bert-seqcls-ampbf16-b32s256", hf("bert", BERT), 32, 256, "amp_bf16", "seq_cls", 3),
    cls("f13-bert-tokcls-ampfp16-b16s256", hf("bert", BERT), 16, 256, "amp_fp16", "token_cls", 9),
    cls("f13-roberta-seqcls-ampbf16-b16s512", hf("roberta", ROBERTA), 16, 512, "amp_bf16", "seq_cls", 2),
    cls("f13-roberta-tokcls-fp32-b8s512", hf("roberta", ROBERTA), 8, 512, "fp32", "token_cls", 7),
    cls("f13-distilbert-seqcls-fp32-b32s256", hf("distilbert", DISTIL), 32, 256, "fp32", "seq_cls", 2),
    cls("f13-distilbert-tokcls-ampbf16-b16s512", hf("distilbert", DISTIL), 16, 512, "amp_bf16", "token_cls", 9),
    cls("f13-modernbert-seqcls-ampbf16-b16s1024", hf("modernbert", MODERNBERT), 16, 1024, "amp_bf16", "seq_cls", 2),
    cls("f13-modernbert-seqcls-bf16-b8s512-mean", hf("modernbert", dict(MODERNBERT, classifier_pooling="mean")), 8,
        512, "bf16", "seq_cls", 3),
    cls("f13-modernbert-tokcls-fp32-b8s512", hf("modernbert", MODERNBERT), 8, 512, "fp32", "token_cls", 9),
    cls("f13-deberta-seqcls-ampbf16-b16s256-eager", hf("deberta-v2", DEBERTA, "eager"), 16, 256, "amp_bf16",
        "seq_cls", 3),
    cls("f13-deberta-tokcls-fp32-b8s512-eager", hf("deberta-v2", DEBERTA, "eager"), 8, 512, "fp32", "token_cls", 9),
    tr("f13-deberta-mlm-bf16-b8s512-eager", hf("deberta-v2", DEBERTA, "eager"), 8, 512, "bf16", "adamw"),
    tr("f13-bart-base-fp32-b8s512t128", hf("bart", BART_BASE), 8, 512, "fp32", "adamw", target_len=128),
    tr("f13-bart-large-ampbf16-b8s1024t256-ckpt", hf("bart", BART_LARGE), 8, 1024, "amp_bf16", "adamw", ckpt=True,
       target_len=256),
    tr("f13-bart-large-bf16-b4s1024t128-eager", hf("bart", BART_LARGE, "eager"), 4, 1024, "bf16", "adamw",
       target_len=128),
    inference("f13-bart-large-infer-bf16-b4s1024-g8", hf("bart", BART_LARGE), 4, 1024, "bf16", 8),
    tr("f13-mbart-ampfp16-b4s512t128", hf("mbart", MBART50), 4, 512, "amp_fp16", "adamw", target_len=128),
    tr("f13-whisper-small-fp32-b8t128", hf("whisper", WHISPER_SMALL), 8, 3000, "fp32", "adamw", target_len=128),
    tr("f13-whisper-small-ampbf16-b16t200-ckpt", hf("whisper", WHISPER_SMALL), 16, 3000, "amp_bf16", "adamw",
       ckpt=True, target_len=200),
    tr("f13-whisper-large3-bf16-b8t128-eager", hf("whisper", WHISPER_LARGE3, "eager"), 8, 3000, "bf16", "adamw",
       target_len=128),
    tr("f13-llama4-bf16-b1s2048", hf("llama4_text", LLAMA4), 1, 2048, "bf16", "adamw", _est_gib=80),
    tr("f13-llama4mav-ampbf16-b1s2048-chunk512", hf("llama4_text", LLAMA4_MAV), 1, 2048, "amp_bf16", "adamw",
       _est_gib=90),
    dict(inference("f13-llama4-infer-bf16-b2s1024-g8", hf("llama4_text", LLAMA4), 2, 1024, "bf16", 8), _est_gib=30),
    inference("f13-granitemoe-infer-bf16-b4s1024-g8", hf("granitemoe", GRANITEMOE), 4, 1024, "bf16", 8),
    tr("f13-granitemoeshared-bf16-b2s1024", hf("granitemoeshared", GRANITESHARED), 2, 1024, "bf16", "adamw"),
    tr("f13-granitemoeshared-ampbf16-b2s1024-ckpt", hf("granitemoeshared", GRANITESHARED), 2, 1024, "amp_bf16",
       "adamw", ckpt=True),
    tr("f13-hunyuan-bf16-b2s2048", hf("hunyuan_v1_dense", HUNYUAN), 2, 2048, "bf16", "adamw"),
    tr("f13-hunyuan-ampbf16-b2s1024-ckpt", hf("hunyuan_v1_dense", HUNYUAN), 2, 1024, "amp_bf16", "adamw", ckpt=True),
    inference("f13-hunyuan-infer-bf16-b4s1024-g8", hf("hunyuan_v1_dense", HUNYUAN), 4, 1024, "bf16", 8),
    tr("f13-apertus-bf16-b1s2048", hf("apertus", APERTUS), 1, 2048, "bf16", "adamw", _est_gib=30),
    tr("f13-apertus-ampbf16-b2s1024", hf("apertus", APERTUS), 2, 1024, "amp_bf16", "adamw", _est_gib=45),
]

if __name__ == "__main__":
    for c in CASES:
        print(json.dumps(c))
