#!/usr/bin/env python3
"""Family set 46 (ERNIE, ernie: ErnieForMaskedLM / ErnieFor{Sequence,Token}Classification / ErnieModel), written from
the modular file without a device: writes calibrate/cases/families46-input.jsonl. Widths follow
nghuyong/ernie-3.0-base-zh (768 x 12 layers, vocabulary 40000, 2048 positions, 4 token types, use_task_id with 3
task types), ernie-3.0-xbase-zh (1024 x 20 layers of 16 heads, MLP 4096) and ernie-1.0-base-zh (vocabulary 18000, 513
positions, no task ids: BERT's model). Masked LM, both classification heads, checkpointing, an embedding-serving
forward. Caps: two copies of the first row under memory_cap_gib near its predicted peak (set from the prediction at
the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families46.py > calibrate/cases/families46-input.jsonl"""
import json

from case_helpers import cap_copies, held_out, hf, inference, training

CAP_LO, CAP_HI = 13.4, 17.0  # the uncapped f46-ernie3b-mlm-ampbf16-b32s512 row predicted 14158.3 MiB allocated, 17098 reserved (this commit)

E3B = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
       "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
       "max_position_embeddings": 2048, "type_vocab_size": 4, "task_type_vocab_size": 3, "use_task_id": True,
       "vocab_size": 40000, "layer_norm_eps": 1e-05, "pad_token_id": 0, "initializer_range": 0.02}
E3X = dict(E3B, hidden_size=1024, num_hidden_layers=20, num_attention_heads=16, intermediate_size=4096)
E1 = dict(E3B, vocab_size=18000, max_position_embeddings=513, type_vocab_size=2, use_task_id=False,
          layer_norm_eps=1e-12)


def row(id_, cfg, mode, b, seq, prec, task=None, labels=None, ckpt=False, cap=None):
    if mode == "training":
        r = training(id_, hf("ernie", cfg), b, seq, prec, "adamw", ckpt=ckpt)
    else:
        r = inference(id_, hf("ernie", cfg), b, seq, prec, 0)
    if task is not None:
        r["task"] = task
        if labels is not None:
            r["num_labels"] = labels
    return held_out(r, cap)


FIRST = ("f46-ernie3b-mlm-ampbf16-b32s512", E3B, "training", 32, 512, "amp_bf16")
rows = [
    row(*FIRST),
    row("f46-ernie3b-seqcls-bf16-b48s384", E3B, "training", 48, 384, "bf16", task="seq_cls", labels=3),
    row("f46-ernie3b-tokcls-fp32-b16s500", E3B, "training", 16, 500, "fp32", task="token_cls", labels=9),
    row("f46-ernie1-mlm-ampbf16-b24s512", E1, "training", 24, 512, "amp_bf16"),
    row("f46-ernie3x-seqcls-bf16-b12s1000-ckpt", E3X, "training", 12, 1000, "bf16", task="seq_cls", labels=2,
        ckpt=True),
    row("f46-ernie3b-feature-bf16-b64s512", E3B, "inference", 64, 512, "bf16", task="feature"),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
