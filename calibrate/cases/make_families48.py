#!/usr/bin/env python3
"""Family set 48 (XLM-RoBERTa-XL, xlm-roberta-xl: XLMRobertaXLForMaskedLM / ...For{Sequence,Token}Classification /
XLMRobertaXLModel), written from the code index's 5.x modular file without a device: writes
calibrate/cases/families48-input.jsonl. Widths follow facebook/xlm-roberta-xl (2560 wide, 32 heads, FFN 10240,
vocabulary 250880, 514 positions) with 4 .. 8 of its 36 layers, so that a row fits a shared 60 GiB pool. Masked LM,
both classification heads, eager, checkpointing, fp32, an embedding-serving forward. Caps: two copies of the first row
under memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the predictions, then
frozen).
Usage: python3 calibrate/cases/make_families48.py > calibrate/cases/families48-input.jsonl"""
import json

from case_helpers import cap_copies, held_out, hf, inference, training

CAP_LO, CAP_HI = 26.5, 33.3  # the uncapped f48-xlmrxl6-mlm-ampbf16-b8s512 row predicted 27486.4 MiB allocated, 33776 reserved (this commit)

XL = {"hidden_size": 2560, "num_hidden_layers": 6, "num_attention_heads": 32, "intermediate_size": 10240,
      "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
      "max_position_embeddings": 514, "type_vocab_size": 1, "vocab_size": 250880, "layer_norm_eps": 1e-05,
      "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "initializer_range": 0.02}
XL4 = dict(XL, num_hidden_layers=4)
XL8 = dict(XL, num_hidden_layers=8)


def row(id_, cfg, mode, b, seq, prec, attn="sdpa", task=None, labels=None, ckpt=False, cap=None):
    model = hf("xlm-roberta-xl", cfg, attn)
    if mode == "training":
        r = training(id_, model, b, seq, prec, "adamw", ckpt=ckpt)
    else:
        r = inference(id_, model, b, seq, prec, 0)
    if task is not None:
        r["task"] = task
        if labels is not None:
            r["num_labels"] = labels
    return held_out(r, cap)


FIRST = ("f48-xlmrxl6-mlm-ampbf16-b8s512", XL, "training", 8, 512, "amp_bf16")
rows = [
    row(*FIRST),
    row("f48-xlmrxl6-seqcls-bf16-b16s256", XL, "training", 16, 256, "bf16", task="seq_cls", labels=3),
    row("f48-xlmrxl4-tokcls-fp32-b4s500", XL4, "training", 4, 500, "fp32", task="token_cls", labels=9),
    row("f48-xlmrxl6-mlm-bf16-b6s500-eager", XL, "training", 6, 500, "bf16", attn="eager"),
    row("f48-xlmrxl8-seqcls-ampbf16-b8s512-ckpt", XL8, "training", 8, 512, "amp_bf16", task="seq_cls", labels=2,
        ckpt=True),
    row("f48-xlmrxl6-feature-bf16-b32s512", XL, "inference", 32, 512, "bf16", task="feature"),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
