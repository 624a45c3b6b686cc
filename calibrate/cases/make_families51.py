#!/usr/bin/env python3
"""Family set 51 (Swin V2, swinv2: Swinv2ForImageClassification, built by harness_kinds/hfvis.py), written from the
installed transformers 5.17 modeling file without a device: writes calibrate/cases/families51-input.jsonl.
Configs follow the published checkpoints' config.json as transcribed in models/zoo (microsoft/swinv2-tiny-patch4-
window8-256: embed 96, depths 2/2/6/2, heads 3/6/12/24, window 8, 256 px; -small-patch4-window8-256: depths 2/2/18/2;
-base-patch4-window16-256: embed 128, heads 4/8/16/32, window 16; -large-patch4-window12-192-22k: embed 192, heads
6/12/24/48, window 12, 192 px, 21841 labels), some with fewer blocks in the third stage. Random pixel_values
[B, 3, S, S] with S the config's image_size (fp32 under amp), one random label per image, the model's own loss;
inference: one forward of the classifier under inference_mode. Eager only (Swinv2 has no SDPA support: from_config
with attn_implementation "sdpa" raises). drop_path_rate is the published 0.1: stochastic depth is live in training.
Checkpointing wraps each Swinv2Stage (the GradientCheckpointingLayer). LoRA targets Swinv2SelfAttention's query /
value Linears. Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from the
prediction at the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families51.py > calibrate/cases/families51-input.jsonl"""
import json

CAP_LO, CAP_HI = 4.0, 4.4  # the uncapped f51-v2t-ampbf16-b32 row predicted 4200.4 MiB allocated, 4406 reserved (this commit)

TINY = {"embed_dim": 96, "depths": [2, 2, 6, 2], "num_heads": [3, 6, 12, 24], "window_size": 8, "image_size": 256,
        "patch_size": 4, "pretrained_window_sizes": [0, 0, 0, 0], "drop_path_rate": 0.1, "num_labels": 1000}
TINY224 = dict(TINY, image_size=224)  # 56 / 28 / 14 / 7 patches a side: stages 1 and 2 padded to the window (8)
SMALL10 = dict(TINY, depths=[2, 2, 10, 2])  # swinv2-small with 10 of its 18 third-stage blocks
BASE16 = {"embed_dim": 128, "depths": [2, 2, 6, 2], "num_heads": [4, 8, 16, 32], "window_size": 16, "image_size": 256,
          "patch_size": 4, "pretrained_window_sizes": [0, 0, 0, 0], "drop_path_rate": 0.1, "num_labels": 1000}
LARGE12 = {"embed_dim": 192, "depths": [2, 2, 6, 2], "num_heads": [6, 12, 24, 48], "window_size": 12,
           "image_size": 192, "patch_size": 4, "pretrained_window_sizes": [0, 0, 0, 0], "drop_path_rate": 0.1,
           "num_labels": 21841}
LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["query", "value"]}


def row(id_, cfg, mode, b, prec, ckpt=False, lora=None, cap=None):
    r = {"id": id_, "model": {"source": "huggingface", "model_type": "swinv2", "config": cfg,
                              "attn_implementation": "eager"},
         "mode": mode, "batch_size": b, "precision": prec}
    if mode == "training":
        r.update({"optimizer": "adamw", "optimizer_impl": "foreach", "grad_checkpointing": ckpt,
                  "grad_accum_steps": 1})
    if lora is not None:
        r["lora"] = lora
    r["holdout"] = True
    if cap is not None:
        r["memory_cap_gib"] = cap
    return r


FIRST = ("f51-v2t-ampbf16-b32", TINY, "training", 32, "amp_bf16")
rows = [
    row(*FIRST),
    row("f51-v2t-fp32-b12", TINY, "training", 12, "fp32"),
    row("f51-v2t-bf16-b24", TINY, "training", 24, "bf16"),
    row("f51-v2t224-ampbf16-b27", TINY224, "training", 27, "amp_bf16"),
    row("f51-v2s10-ampbf16-b36-ckpt", SMALL10, "training", 36, "amp_bf16", ckpt=True),
    row("f51-v2b16-ampbf16-b15", BASE16, "training", 15, "amp_bf16"),
    row("f51-v2t-bf16-b33-lora", TINY, "training", 33, "bf16", lora=LORA),
    row("f51-v2l12-infer-bf16-b96", LARGE12, "inference", 96, "bf16"),
]
if CAP_LO is not None:
    rows += [row(FIRST[0] + "-cap-lo", *FIRST[1:], cap=CAP_LO), row(FIRST[0] + "-cap-hi", *FIRST[1:], cap=CAP_HI)]
for r in rows:
    print(json.dumps(r))
