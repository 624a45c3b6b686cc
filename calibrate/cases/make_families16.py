#!/usr/bin/env python3
"""Family set 16 (2026-12-03, fourteenth session): the held-out set of family set 15, on other shapes and settings
(odd batches and lengths, GradScaler, checkpointing, eager, generate), predicted at a named commit before it is
measured (data/validation/predictions/families16-holdout.json). The helpers who wrote the builders were told
these configurations (so nothing is refused) but never their numbers.
Usage: python3 make_families16.py > families16-holdout-input.jsonl; each row then got `_est_gib` (the recording
scheduler's memory estimate: the predicted reserved peak in GiB + 2) from the predictions.
"""
import json

from case_helpers import hf, inference, training
from make_families15 import (CAMEMBERT, COHERE2, COHERE2_SW, ELECTRA_B, ELECTRA_S, GLM4MOE, GLM4MOE_QK, GPTNEO125,
                             GPTNEO13, M2M, MARIAN, MARIAN_BIG, MT5B, MT5S, NLLB, PEGASUS, UMT5S, VITB, VITL, vit)

tr = training
VITB32 = dict(VITB, patch_size=32, num_labels=100)
# The published NLLB-200 configs set no LayerDrop (M2M100Config's default is 0.05, which set 15's NLLB rows kept:
# random skipped layers, notes-f15/m2m.md); M2M-100's keep 0.05 as published: memplan replays the step in which
# every layer runs.
NLLB = dict(NLLB, encoder_layerdrop=0.0, decoder_layerdrop=0.0)

CASES = [
    tr("f16-marian-ampbf16-b32s128t128", hf("marian", MARIAN), 32, 128, "amp_bf16", "adamw", target_len=128),
    inference("f16-marian-infer-bf16-b16s96-g24", hf("marian", MARIAN), 16, 96, "bf16", 24),
    tr("f16-marianbig-bf16-b6s384t384-ckpt", hf("marian", MARIAN_BIG), 6, 384, "bf16", "adamw", ckpt=True,
       target_len=384),
    tr("f16-pegasus-ampfp16-b6s768t128", hf("pegasus", PEGASUS), 6, 768, "amp_fp16", "adamw", target_len=128),
    tr("f16-pegasus-fp32-b2s1024t256-eager", hf("pegasus", PEGASUS, "eager"), 2, 1024, "fp32", "adamw",
       target_len=256),
    tr("f16-nllb-ampbf16-b12s200t200", hf("m2m_100", NLLB), 12, 200, "amp_bf16", "adamw", target_len=200),
    inference("f16-nllb-infer-bf16-b4s300-g20", hf("m2m_100", NLLB), 4, 300, "bf16", 20),
    tr("f16-m2m-bf16-b3s1000t100-ckpt", hf("m2m_100", M2M), 3, 1000, "bf16", "adamw", ckpt=True, target_len=100),
    tr("f16-mt5s-ampfp16-b12s384t96", hf("mt5", MT5S), 12, 384, "amp_fp16", "adamw", target_len=96),
    tr("f16-mt5b-bf16-b6s512t128-ckpt", hf("mt5", MT5B), 6, 512, "bf16", "adamw", ckpt=True, target_len=128),
    tr("f16-umt5s-fp32-b3s500t100", hf("umt5", UMT5S), 3, 500, "fp32", "adamw", target_len=100),
    inference("f16-umt5-infer-bf16-b4s256-g16", hf("umt5", UMT5S), 4, 256, "bf16", 16),
    tr("f16-camembert-tokcls-ampfp16-b24s384", hf("camembert", CAMEMBERT), 24, 384, "amp_fp16", "adamw",
       task="token_cls", num_labels=7),
    tr("f16-electras-seqcls-bf16-b64s256", hf("electra", ELECTRA_S), 64, 256, "bf16", "adamw", task="seq_cls",
       num_labels=2),
    tr("f16-electrab-mlm-ampbf16-b12s500-ckpt", hf("electra", ELECTRA_B), 12, 500, "amp_bf16", "adamw", ckpt=True),
    tr("f16-cohere2-ampbf16-b1s4096", hf("cohere2", COHERE2), 1, 4096, "amp_bf16", "adamw", _est_gib=60),
    tr("f16-cohere2sw-bf16-b3s1500", hf("cohere2", COHERE2_SW), 3, 1500, "bf16", "adamw"),
    inference("f16-cohere2-infer-bf16-b2s2048-g16", hf("cohere2", COHERE2), 2, 2048, "bf16", 16),
    tr("f16-glm4moe-ampbf16-b3s1000", hf("glm4_moe", GLM4MOE), 3, 1000, "amp_bf16", "adamw"),
    tr("f16-glm4moeqk-bf16-b1s4096-ckpt", hf("glm4_moe", GLM4MOE_QK), 1, 4096, "bf16", "adamw", ckpt=True),
    inference("f16-glm4moeqk-infer-bf16-b8s256-g16", hf("glm4_moe", GLM4MOE_QK), 8, 256, "bf16", 16),
    tr("f16-gptneo125-ampbf16-b12s1000-eager", hf("gpt_neo", GPTNEO125, "eager"), 12, 1000, "amp_bf16", "adamw"),
    tr("f16-gptneo13-bf16-b2s2048-eager", hf("gpt_neo", GPTNEO13, "eager"), 2, 2048, "bf16", "adamw"),
    inference("f16-gptneo13-infer-bf16-b8s300-g20-eager", hf("gpt_neo", GPTNEO13, "eager"), 8, 300, "bf16", 20),
    vit("f16-vitb-ampfp16-b48", VITB, 48, "amp_fp16"),
    vit("f16-vitl-ampbf16-b16-ckpt", VITL, 16, "amp_bf16", ckpt=True),
    vit("f16-vitb32-fp32-b24", VITB32, 24, "fp32"),
]

if __name__ == "__main__":
    for c in CASES:
        c["holdout"] = True
        print(json.dumps(c))
