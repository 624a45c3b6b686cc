#!/usr/bin/env python3
"""Family set 31 (twenty-fifth session), held out: the T5 family after its attention and sub-layer streams were traced
against the whole-run recordings (data/validation/NOTES.md "T5's attention as the recordings run it": the math SDPA's
in-place mask add and one-output _safe_softmax, the relative buckets released, UMT5's log_ratio local, the
sub-layers' outputs bound until they return, the efficient backward's expanded mask gradient). Those fixes were judged
on the rows they were traced from; these rows are new shapes and settings of the same builders: checkpointed and
not, bf16 / amp / fp32, LoRA, generation, T5 v1.0 / Flan-T5 (gated, untied) / mT5 / UMT5, one on-device build. Every
row is predicted at a commit before the call that measures it (data/validation/predictions/families31-holdout.json).
Usage: python3 t5_streams.py  (JSONL on stdout)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, training  # noqa: E402

T5_SMALL = {"d_model": 512, "d_ff": 2048, "d_kv": 64, "num_heads": 8, "num_layers": 6, "vocab_size": 32128,
            "decoder_start_token_id": 0, "pad_token_id": 0}
T5_BASE = {"d_model": 768, "d_ff": 3072, "d_kv": 64, "num_heads": 12, "num_layers": 12, "vocab_size": 32128,
           "decoder_start_token_id": 0, "pad_token_id": 0}
FLAN_BASE = {"d_model": 768, "d_ff": 2048, "d_kv": 64, "num_heads": 12, "num_layers": 12, "vocab_size": 32128,
             "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False, "decoder_start_token_id": 0,
             "pad_token_id": 0}
FLAN_SMALL = {"d_model": 512, "d_ff": 1024, "d_kv": 64, "num_heads": 6, "num_layers": 8, "vocab_size": 32128,
              "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False, "decoder_start_token_id": 0,
              "pad_token_id": 0}
MT5_SMALL = {"d_model": 512, "d_ff": 1024, "d_kv": 64, "num_heads": 6, "num_layers": 8, "num_decoder_layers": 8,
             "vocab_size": 250112, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False,
             "decoder_start_token_id": 0, "pad_token_id": 0}
UMT5_SMALL = dict(MT5_SMALL, vocab_size=256384)


def holdout():
    lora = {"r": 16, "alpha": 32, "dropout": 0.05, "target_modules": "all-linear"}
    lora_qv = {"r": 8, "alpha": 16, "dropout": 0.05, "target_modules": ["q", "v"]}
    rows = [
        training("f31-t5s-bf16-b6s700t90-ckpt", hf("t5", T5_SMALL), 6, 700, "bf16", "adamw", ckpt=True, target_len=90),
        training("f31-flanb-ampbf16-b5s600t150-ckpt", hf("t5", FLAN_BASE), 5, 600, "amp_bf16", "adamw", ckpt=True,
                 target_len=150),
        training("f31-mt5s-bf16-r16-all-b8s384t96", hf("mt5", MT5_SMALL), 8, 384, "bf16", "adamw", target_len=96,
                 lora=lora),
        training("f31-umt5s-bf16-b4s900t120-ckpt", hf("umt5", UMT5_SMALL), 4, 900, "bf16", "adamw", ckpt=True,
                 target_len=120),
        training("f31-t5b-fp32-b3s512t128", hf("t5", T5_BASE), 3, 512, "fp32", "adamw", target_len=128),
        training("f31-t5b-ampbf16-r8-qv-b12s300t60", hf("t5", T5_BASE), 12, 300, "amp_bf16", "adamw", target_len=60,
                 lora=lora_qv),
        training("f31-umt5s-ampbf16-b6s512t128", hf("umt5", UMT5_SMALL), 6, 512, "amp_bf16", "adamw", target_len=128),
        training("f31-flans-bf16-b8s500t100-ondevice", hf("t5", FLAN_SMALL), 8, 500, "bf16", "adamw", target_len=100,
                 load="on_device"),
    ]
    rows.append(dict(inference("f31-flans-infer-bf16-b6s500-g12", hf("t5", FLAN_SMALL), 6, 500, "bf16", 12),
                     generate_first=False))
    return rows


if __name__ == "__main__":
    for c in holdout():
        c["holdout"] = True
        print(json.dumps(c))
