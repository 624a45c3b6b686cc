#!/usr/bin/env python3
"""Twenty-first step-time set, held out (issue 17 part 3; written 2026-12-03, fourteenth session): writes
calibrate/cases/timing21-holdout-input.jsonl. The first timed rows of family set 15's eleven model_types (marian,
pegasus, m2m_100, mt5, umt5, camembert, electra, cohere2, glm4_moe, gpt_neo, vit) at published shapes (Command
R7B and GLM-4.5-Air cut to a few layers), typical fine-tuning batches. Pre-registered: predicted at the commit that
adds it (data/validation/predictions/timing21-holdout.json), then timed one at a time by calibrate/holdout_timing.sh.
"""
import os

from case_helpers import write_holdout
from make_families15 import CAMEMBERT, COHERE2, ELECTRA_B, GLM4MOE, GPTNEO125, MARIAN, MT5S, NLLB, PEGASUS, VITB

HERE = os.path.dirname(os.path.abspath(__file__))


def hf(mt, cfg, attn="sdpa"):
    return {"source": "huggingface", "model_type": mt, "config": cfg, "attn_implementation": attn}


def train(cid, model, prec, b, s, ckpt=False, ga=1, **extra):
    c = {"id": cid, "model": model, "mode": "training", "batch_size": b, "seq_len": s, "precision": prec,
         "optimizer": "adamw", "optimizer_impl": "foreach", "grad_checkpointing": ckpt, "grad_accum_steps": ga}
    c.update(extra)
    if s is None:
        del c["seq_len"]
    return c


PEGASUS_LARGE = dict(PEGASUS, encoder_layers=16, decoder_layers=16)
NLLB600 = dict(NLLB, encoder_layers=12, decoder_layers=12)
MT5B = dict(MT5S, d_model=768, d_ff=2048, num_heads=12, num_layers=12, num_decoder_layers=12)
CAMEMBERT_BASE = dict(CAMEMBERT, num_hidden_layers=12)
ELECTRA_BASE = dict(ELECTRA_B, num_hidden_layers=12)
GLM45AIR_2L = dict(GLM4MOE, hidden_size=4096, intermediate_size=10944, moe_intermediate_size=1408,
                   num_hidden_layers=2, num_attention_heads=96, num_key_value_heads=8, n_routed_experts=128)
GPTNEO13 = {"hidden_size": 2048, "num_layers": 24, "num_heads": 16, "attention_types": [[["global", "local"], 12]],
            "window_size": 256, "vocab_size": 50257, "max_position_embeddings": 2048}
VITL = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096,
        "image_size": 224, "patch_size": 16, "num_labels": 1000}

HOLD = [
    train("ht21-opusmt-ampbf16-b32s128t128", hf("marian", MARIAN), "amp_bf16", 32, 128, target_len=128),
    train("ht21-pegasusl-bf16-b4s1024t256", hf("pegasus", PEGASUS_LARGE), "bf16", 4, 1024, target_len=256),
    train("ht21-nllb600-ampbf16-b8s256t256", hf("m2m_100", NLLB600), "amp_bf16", 8, 256, target_len=256),
    train("ht21-mt5b-bf16-b8s512t128", hf("mt5", MT5B), "bf16", 8, 512, target_len=128),
    train("ht21-umt5s-ampbf16-b16s512t128", hf("umt5", dict(MT5S, vocab_size=256384)), "amp_bf16", 16, 512,
          target_len=128),
    train("ht21-camembert-seqcls-ampbf16-b32s256", hf("camembert", CAMEMBERT_BASE), "amp_bf16", 32, 256,
          task="seq_cls", num_labels=2),
    train("ht21-electrab-seqcls-ampfp16-b32s512", hf("electra", ELECTRA_BASE), "amp_fp16", 32, 512, task="seq_cls",
          num_labels=2),
    train("ht21-cohere2r7b-4l-bf16-b1s4096", hf("cohere2", COHERE2), "bf16", 1, 4096),
    train("ht21-glm45air-2l-bf16-b1s2048", hf("glm4_moe", GLM45AIR_2L), "bf16", 1, 2048),
    train("ht21-gptneo125-bf16-b8s2048-eager", hf("gpt_neo", GPTNEO125, "eager"), "bf16", 8, 2048),
    train("ht21-gptneo13-ampbf16-b2s2048-ckpt-eager", hf("gpt_neo", GPTNEO13, "eager"), "amp_bf16", 2, 2048,
          ckpt=True),
    train("ht21-vitb-ampbf16-b128", hf("vit", VITB), "amp_bf16", 128, None),
    train("ht21-vitl-bf16-b32", hf("vit", VITL), "bf16", 32, None),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing21-holdout-input.jsonl"), HOLD))
