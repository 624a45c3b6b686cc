#!/usr/bin/env python3
"""Family set 18 (2026-12-03, fifteenth session): held-out rows of family set 17's model_types (olmo3, ernie4_5_moe,
phimoe, albert, mpnet, dinov2, deit, lfm2; whisper and mbart generate), other shapes and settings, written before
the builders and predicted at their merge before measuring (data/validation/predictions/families18-holdout.json).
DeiT has only these rows (its tuning rows did not run).
Usage: python3 make_families18.py > families18-holdout-input.jsonl"""
import json

from case_helpers import hf, inference, training
from make_families17 import (ALBERT_B, ALBERT_L, ALBERT_XXL, DEIT_B, DEIT_S, DINOV2_B, ERNIE_MOE, ERNIE_MOE16,
                             LFM2_12, LFM2_350, LFM2_700, MBART, MPNET, OLMO3, OLMO3_SW, PHIMOE, PHIMOE_S, WHISPER_S,
                             image, speech_infer)

tr = training
DINOV2_S = dict(DINOV2_B, hidden_size=384, num_attention_heads=6)
DINOV2_L518 = dict(DINOV2_B, hidden_size=1024, num_attention_heads=16, num_hidden_layers=6, image_size=518,
                   num_labels=100)
WHISPER_T = dict(WHISPER_S, d_model=384, encoder_layers=4, decoder_layers=4, encoder_attention_heads=6,
                 decoder_attention_heads=6, encoder_ffn_dim=1536, decoder_ffn_dim=1536)

CASES = [
    tr("f18-olmo3-ampbf16-b1s4096-3l", hf("olmo3", dict(OLMO3, num_hidden_layers=3)), 1, 4096, "amp_bf16", "adamw",
       _est_gib=45),
    tr("f18-olmo3sw-bf16-b3s1500-ckpt", hf("olmo3", dict(OLMO3_SW, sliding_window=1000)), 3, 1500, "bf16", "adamw",
       ckpt=True, _est_gib=25),
    inference("f18-olmo3-infer-bf16-b2s2048-g24", hf("olmo3", OLMO3), 2, 2048, "bf16", 24),
    tr("f18-erniemoe-ampbf16-b2s2048", hf("ernie4_5_moe", ERNIE_MOE), 2, 2048, "amp_bf16", "adamw", _est_gib=50),
    tr("f18-erniemoe-bf16-b3s1000-ckpt", hf("ernie4_5_moe", ERNIE_MOE), 3, 1000, "bf16", "adamw", ckpt=True,
       _est_gib=25),
    inference("f18-erniemoe16-infer-bf16-b8s256-g20", hf("ernie4_5_moe", ERNIE_MOE16), 8, 256, "bf16", 20),
    tr("f18-phimoes-bf16-b4s1024", hf("phimoe", PHIMOE_S), 4, 1024, "bf16", "adamw", _est_gib=25),
    tr("f18-phimoe-ampbf16-b1s2048-ckpt", hf("phimoe", PHIMOE), 1, 2048, "amp_bf16", "adamw", ckpt=True,
       _est_gib=55),
    inference("f18-phimoes-infer-bf16-b4s1000-g24", hf("phimoe", PHIMOE_S), 4, 1000, "bf16", 24),
    tr("f18-albertb-bf16-b48s256", hf("albert", ALBERT_B), 48, 256, "bf16", "adamw"),
    tr("f18-albertxxl-ampbf16-b4s512", hf("albert", ALBERT_XXL), 4, 512, "amp_bf16", "adamw", _est_gib=30),
    tr("f18-albertl-tokcls-ampfp16-b16s384", hf("albert", ALBERT_L), 16, 384, "amp_fp16", "adamw", task="token_cls",
       num_labels=7),
    tr("f18-mpnet-ampfp16-b24s512-eager", hf("mpnet", MPNET, "eager"), 24, 512, "amp_fp16", "adamw"),
    tr("f18-mpnet-seqcls-bf16-b128s128-eager", hf("mpnet", MPNET, "eager"), 128, 128, "bf16", "adamw",
       task="seq_cls", num_labels=5),
    image("f18-dinov2s-ampbf16-b128", "dinov2", DINOV2_S, 128, "amp_bf16"),
    image("f18-dinov2b-bf16-b24-ckpt", "dinov2", DINOV2_B, 24, "bf16", ckpt=True),
    image("f18-dinov2l518-ampfp16-b4", "dinov2", DINOV2_L518, 4, "amp_fp16"),
    image("f18-deitb-ampbf16-b64", "deit", DEIT_B, 64, "amp_bf16"),
    image("f18-deits-fp32-b64-eager", "deit", DEIT_S, 64, "fp32", "eager"),
    image("f18-deitb-bf16-b32-ckpt", "deit", DEIT_B, 32, "bf16", ckpt=True),
    tr("f18-lfm2-ampbf16-b3s2048", hf("lfm2", LFM2_12), 3, 2048, "amp_bf16", "adamw", _est_gib=45),
    tr("f18-lfm2350-bf16-b8s1024-ckpt", hf("lfm2", LFM2_350), 8, 1024, "bf16", "adamw", ckpt=True),
    inference("f18-lfm2700-infer-bf16-b4s1000-g24", hf("lfm2", LFM2_700), 4, 1000, "bf16", 24),
    speech_infer("f18-whispert-infer-fp32-b16-g24", WHISPER_T, 16, "fp32", 24),
    speech_infer("f18-whispers-infer-bf16-b3-g40", WHISPER_S, 3, "bf16", 40),
    inference("f18-mbart-infer-ampbf16-b8s300-g24", hf("mbart", MBART), 8, 300, "amp_bf16", 24),
    inference("f18-mbart-infer-bf16-b2s1000-g16", hf("mbart", MBART), 2, 1000, "bf16", 16),
]

if __name__ == "__main__":
    for c in CASES:
        c["holdout"] = True
        print(json.dumps(c))
