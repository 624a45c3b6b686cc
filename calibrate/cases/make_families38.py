#!/usr/bin/env python3
"""Family set 38 (BEiT and Data2Vec-vision image classifiers, twenty-eighth session): writes
calibrate/cases/families38-input.jsonl. Configs follow the published checkpoints' config.json (microsoft/beit-base-
patch16-224, beit-large-patch16-224, beit-base-patch16-384, facebook/data2vec-vision-base-ft1k / -large-ft1k) with
num_labels set directly; two rows vary the flags the fine-tuned checkpoints leave off (the shared bias with the
mask token of the pt22k configs; absolute positions with cls pooling and no layer scale). Caps: two rows of the
amp b48 base run under memory_cap_gib near its predicted peak (set from the prediction, then frozen).
Usage: python3 calibrate/cases/make_families38.py > calibrate/cases/families38-input.jsonl"""
import json

CAP_LO, CAP_HI = 4.95, 5.45  # the uncapped b48 row predicted 5188.9 MiB allocated, 5388 reserved (this commit)

BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
        "image_size": 224, "patch_size": 16, "use_relative_position_bias": True, "use_mean_pooling": True,
        "layer_scale_init_value": 0.1, "drop_path_rate": 0.1, "num_labels": 1000}
LARGE = dict(BASE, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)


def row(id_, mt, cfg, mode, b, prec, opt="adamw", attn="sdpa", ckpt=False, accum=1, cap=None):
    r = {"id": id_, "model": {"source": "huggingface", "model_type": mt, "config": cfg, "attn_implementation": attn},
         "mode": mode, "batch_size": b, "precision": prec}
    if mode == "training":
        r.update({"optimizer": opt, "optimizer_impl": "foreach", "grad_checkpointing": ckpt, "grad_accum_steps": accum})
    r["holdout"] = True
    if cap is not None:
        r["memory_cap_gib"] = cap
    return r


rows = [
    row("f38-beitb-ampbf16-adamw-b32", "beit", BASE, "training", 32, "amp_bf16"),
    row("f38-beitb-bf16-adamw-b24-eager", "beit", BASE, "training", 24, "bf16", attn="eager"),
    row("f38-beitl-ampbf16-adamw-b12-ckpt", "beit", LARGE, "training", 12, "amp_bf16", ckpt=True),
    row("f38-beitb384-ampbf16-adamw-b10", "beit", dict(BASE, image_size=384), "training", 10, "amp_bf16"),
    row("f38-d2vb-fp32-sgdmom-b20", "data2vec-vision", BASE, "training", 20, "fp32", opt="sgd_momentum"),
    row("f38-d2vb-ampfp16-adamw-b48-a2", "data2vec-vision", dict(BASE, num_labels=100), "training", 48, "amp_fp16",
        accum=2),
    row("f38-beitb-shared-ampbf16-adamw-b16", "beit",
        dict(BASE, use_relative_position_bias=False, use_shared_relative_position_bias=True, use_mask_token=True),
        "training", 16, "amp_bf16"),
    row("f38-beitb-abspos-cls-ampbf16-adamw-b16", "beit",
        dict(BASE, use_relative_position_bias=False, use_absolute_position_embeddings=True, use_mean_pooling=False,
             layer_scale_init_value=0.0), "training", 16, "amp_bf16"),
    row("f38-beitb-infer-bf16-b64", "beit", BASE, "inference", 64, "bf16"),
    row("f38-d2vl-infer-ampbf16-b32-eager", "data2vec-vision", LARGE, "inference", 32, "amp_bf16", attn="eager"),
    row("f38-beitb-ampbf16-adamw-b48-cap-lo", "beit", BASE, "training", 48, "amp_bf16", cap=CAP_LO),
    row("f38-beitb-ampbf16-adamw-b48-cap-hi", "beit", BASE, "training", 48, "amp_bf16", cap=CAP_HI),
]
for r in rows:
    print(json.dumps(r))
