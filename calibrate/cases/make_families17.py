#!/usr/bin/env python3
"""Family set 17 (2026-12-03, fifteenth session): tuning rows of nine model_types memplan refused until now and two
inference paths it refused, measured on the H200 before any builder exists: olmo3 (OLMo-3), ernie4_5_moe
(ERNIE-4.5-21B-A3B), phimoe (Phi-3.5-MoE), albert, mpnet, dinov2, deit, lfm2 (LFM2), and generate() for whisper
and mbart. Published widths, fewer layers where the step would be large; bf16 / amp / fp32, checkpointing,
accumulation, eager, generate. Its held-out partner (family set 18) is written after the builders, predicted
before measuring.
Usage: python3 make_families17.py > families17-input.jsonl"""
import json

from case_helpers import hf, inference, training

tr = training
OLMO3 = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 4, "num_attention_heads": 32,
         "num_key_value_heads": 32, "vocab_size": 100278, "max_position_embeddings": 65536, "sliding_window": 4096,
         "rms_norm_eps": 1e-6}
OLMO3_SW = dict(OLMO3, sliding_window=512)
OLMO3_32 = dict(OLMO3, hidden_size=5120, intermediate_size=27648, num_hidden_layers=2, num_attention_heads=40,
                num_key_value_heads=8, layer_types=["sliding_attention", "full_attention"])
ERNIE_MOE = {"hidden_size": 2560, "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_hidden_layers": 3,
             "num_attention_heads": 20, "num_key_value_heads": 4, "moe_num_experts": 64, "moe_k": 6,
             "moe_num_shared_experts": 2, "vocab_size": 103424}
ERNIE_MOE16 = dict(ERNIE_MOE, moe_num_experts=16, moe_k=4, num_hidden_layers=4, moe_layer_interval=2)
PHIMOE = {"hidden_size": 4096, "intermediate_size": 6400, "num_hidden_layers": 2, "num_attention_heads": 32,
          "num_key_value_heads": 8, "num_local_experts": 16, "num_experts_per_tok": 2, "vocab_size": 32064,
          "attention_bias": True, "lm_head_bias": True, "max_position_embeddings": 131072}
PHIMOE_S = dict(PHIMOE, hidden_size=2048, intermediate_size=3200, num_attention_heads=16, num_key_value_heads=4,
                num_hidden_layers=3, num_local_experts=8)
ALBERT_B = {"vocab_size": 30000, "embedding_size": 128, "hidden_size": 768, "num_hidden_layers": 12,
            "num_attention_heads": 12, "intermediate_size": 3072}
ALBERT_L = dict(ALBERT_B, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
ALBERT_XL = dict(ALBERT_B, hidden_size=2048, num_hidden_layers=24, num_attention_heads=16, intermediate_size=8192)
ALBERT_XXL = dict(ALBERT_B, hidden_size=4096, num_hidden_layers=12, num_attention_heads=64, intermediate_size=16384)
MPNET = {"vocab_size": 30527, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
         "intermediate_size": 3072, "max_position_embeddings": 514, "pad_token_id": 1}
DINOV2_B = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "image_size": 224,
            "patch_size": 14, "num_labels": 1000}
DINOV2_B518 = dict(DINOV2_B, image_size=518, num_hidden_layers=6, num_labels=10)
DINOV2_L = dict(DINOV2_B, hidden_size=1024, num_hidden_layers=6, num_attention_heads=16)
DINOV2_G = dict(DINOV2_B, hidden_size=1536, num_hidden_layers=4, num_attention_heads=24, use_swiglu_ffn=True)
DEIT_B = {"architectures": ["DeiTForImageClassification"], "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
          "image_size": 224, "patch_size": 16, "num_labels": 1000}
DEIT_S = dict(DEIT_B, hidden_size=384, num_attention_heads=6, intermediate_size=1536)
DEIT_T = dict(DEIT_B, hidden_size=192, num_attention_heads=3, intermediate_size=768)
LFM2_12 = {"hidden_size": 2048, "intermediate_size": 12288, "num_hidden_layers": 16, "num_attention_heads": 32,
           "num_key_value_heads": 8, "vocab_size": 65536, "full_attn_idxs": [2, 5, 8, 10, 12, 14],
           "max_position_embeddings": 128000}
LFM2_350 = dict(LFM2_12, hidden_size=1024, intermediate_size=6656, num_attention_heads=16)
LFM2_700 = dict(LFM2_12, hidden_size=1536, intermediate_size=10240, num_attention_heads=24)
WHISPER_S = {"d_model": 768, "encoder_layers": 12, "decoder_layers": 12, "encoder_attention_heads": 12,
             "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072, "vocab_size": 51865,
             "num_mel_bins": 80}
WHISPER_B = dict(WHISPER_S, d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                 decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048)
WHISPER_LV3 = dict(WHISPER_S, d_model=1280, encoder_layers=8, decoder_layers=4, encoder_attention_heads=20,
                   decoder_attention_heads=20, encoder_ffn_dim=5120, decoder_ffn_dim=5120, vocab_size=51866,
                   num_mel_bins=128)
MBART = {"d_model": 1024, "encoder_layers": 12, "decoder_layers": 12, "encoder_attention_heads": 16,
         "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096, "vocab_size": 250027,
         "scale_embedding": True, "max_position_embeddings": 1024, "pad_token_id": 1, "eos_token_id": 2,
         "decoder_start_token_id": 2}


def image(id, mt, cfg, b, prec, attn="sdpa", **kw):
    c = tr(id, hf(mt, cfg, attn), b, 0, prec, "adamw", **kw)
    del c["seq_len"]
    return c


def speech_infer(id, cfg, b, prec, gen, frames=3000):
    return inference(id, hf("whisper", cfg), b, frames, prec, gen)


CASES = [
    tr("f17-olmo3-bf16-b1s8192", hf("olmo3", OLMO3), 1, 8192, "bf16", "adamw", _est_gib=45),
    tr("f17-olmo3sw-ampbf16-b2s2048", hf("olmo3", OLMO3_SW), 2, 2048, "amp_bf16", "adamw", _est_gib=50),
    tr("f17-olmo3-bf16-b2s4096-ckpt", hf("olmo3", OLMO3), 2, 4096, "bf16", "adamw", ckpt=True, _est_gib=30),
    inference("f17-olmo3sw-infer-bf16-b4s1024-g32", hf("olmo3", OLMO3_SW), 4, 1024, "bf16", 32),
    tr("f17-olmo332-bf16-b1s4096-2l", hf("olmo3", OLMO3_32), 1, 4096, "bf16", "adamw", _est_gib=40),
    tr("f17-olmo3sw-fp32-b1s1024-eager", hf("olmo3", dict(OLMO3_SW, num_hidden_layers=2), "eager"), 1, 1024, "fp32",
       "adamw", _est_gib=40),
    tr("f17-erniemoe-bf16-b2s2048", hf("ernie4_5_moe", ERNIE_MOE), 2, 2048, "bf16", "adamw", _est_gib=30),
    tr("f17-erniemoe-ampbf16-b4s1024-ckpt", hf("ernie4_5_moe", ERNIE_MOE), 4, 1024, "amp_bf16", "adamw", ckpt=True,
       _est_gib=45),
    tr("f17-erniemoe16-fp32-b1s1024", hf("ernie4_5_moe", ERNIE_MOE16), 1, 1024, "fp32", "adamw", _est_gib=35),
    inference("f17-erniemoe-infer-bf16-b4s512-g16", hf("ernie4_5_moe", ERNIE_MOE), 4, 512, "bf16", 16),
    tr("f17-phimoe-bf16-b2s2048", hf("phimoe", PHIMOE), 2, 2048, "bf16", "adamw", _est_gib=40),
    tr("f17-phimoes-ampbf16-b2s2048-ckpt", hf("phimoe", PHIMOE_S), 2, 2048, "amp_bf16", "adamw", ckpt=True,
       _est_gib=25),
    tr("f17-phimoes-fp32-b1s1024-eager", hf("phimoe", PHIMOE_S, "eager"), 1, 1024, "fp32", "adamw", _est_gib=25),
    inference("f17-phimoe-infer-bf16-b8s512-g16", hf("phimoe", PHIMOE), 8, 512, "bf16", 16, ),
    tr("f17-albertb-ampbf16-b32s512", hf("albert", ALBERT_B), 32, 512, "amp_bf16", "adamw"),
    tr("f17-albertxxl-bf16-b8s512", hf("albert", ALBERT_XXL), 8, 512, "bf16", "adamw", _est_gib=35),
    tr("f17-albertl-fp32-b16s256-eager", hf("albert", ALBERT_L, "eager"), 16, 256, "fp32", "adamw"),
    tr("f17-albertb-seqcls-ampfp16-b64s128", hf("albert", ALBERT_B), 64, 128, "amp_fp16", "adamw", task="seq_cls",
       num_labels=3),
    # AlbertForMaskedLM refuses gradient checkpointing (supports_gradient_checkpointing False): measured without
    tr("f17-albertxl-bf16-b4s512", hf("albert", ALBERT_XL), 4, 512, "bf16", "adamw"),
    tr("f17-mpnet-ampbf16-b32s384-eager", hf("mpnet", MPNET, "eager"), 32, 384, "amp_bf16", "adamw"),
    # MPNet has no SDPA in transformers 5.17 (from_config with attn_implementation="sdpa" raises): eager only
    tr("f17-mpnet-bf16-b16s512-eager", hf("mpnet", MPNET, "eager"), 16, 512, "bf16", "adamw"),
    tr("f17-mpnet-seqcls-ampfp16-b64s256-eager", hf("mpnet", MPNET, "eager"), 64, 256, "amp_fp16", "adamw",
       task="seq_cls", num_labels=2),
    tr("f17-mpnet-tokcls-fp32-b16s512-eager", hf("mpnet", MPNET, "eager"), 16, 512, "fp32", "adamw",
       task="token_cls", num_labels=9),
    # f17-mpnet-bf16-b24s512-ckpt-eager did not run: MPNetForMaskedLM refuses gradient checkpointing
    image("f17-dinov2b-ampbf16-b64", "dinov2", DINOV2_B, 64, "amp_bf16"),
    image("f17-dinov2b518-bf16-b8", "dinov2", DINOV2_B518, 8, "bf16"),
    image("f17-dinov2g-ampbf16-b16", "dinov2", DINOV2_G, 16, "amp_bf16"),
    image("f17-dinov2l-fp32-b16-ckpt", "dinov2", DINOV2_L, 16, "fp32", ckpt=True),
    image("f17-dinov2b-fp32-b8-eager", "dinov2", dict(DINOV2_B, num_hidden_layers=4), 8, "fp32", "eager"),
    # DeiT's four rows did not run: AutoModelForImageClassification maps deit to two classes and picks by
    # config.architectures, which these configs lacked; family set 18 names DeiTForImageClassification
    tr("f17-lfm2-bf16-b4s2048", hf("lfm2", LFM2_12), 4, 2048, "bf16", "adamw", _est_gib=35),
    tr("f17-lfm2-ampbf16-b2s4096-ckpt", hf("lfm2", LFM2_12), 2, 4096, "amp_bf16", "adamw", ckpt=True, _est_gib=30),
    tr("f17-lfm2350-fp32-b4s1024", hf("lfm2", LFM2_350), 4, 1024, "fp32", "adamw"),
    tr("f17-lfm2700-ampfp16-b8s1024-acc2", hf("lfm2", LFM2_700), 8, 1024, "amp_fp16", "adamw", accum=2,
       _est_gib=35),
    inference("f17-lfm2-infer-bf16-b8s512-g32", hf("lfm2", LFM2_12), 8, 512, "bf16", 32),
    speech_infer("f17-whispers-infer-bf16-b8-g32", WHISPER_S, 8, "bf16", 32),
    speech_infer("f17-whisperb-infer-fp32-b4-g16", WHISPER_B, 4, "fp32", 16),
    speech_infer("f17-whisperlv3-infer-bf16-b2-g24", WHISPER_LV3, 2, "bf16", 24),
    inference("f17-mbart-infer-bf16-b4s512-g32", hf("mbart", MBART), 4, 512, "bf16", 32),
    inference("f17-mbart-infer-fp32-b2s256-g16", hf("mbart", MBART), 2, 256, "fp32", 16),
]

if __name__ == "__main__":
    for c in CASES:
        print(json.dumps(c))
