#!/usr/bin/env python3
"""Family set 49 (MPT, mpt: MptForCausalLM), written from the code index's modeling file without a device: writes
calibrate/cases/families49-input.jsonl. Widths follow mosaicml/mpt-7b (4096 wide, 32 heads, FFN 4 x 4096, vocabulary
50432, ALiBi over max_seq_len 2048) with 4 .. 6 of its 32 layers, and a 1B-class shape (2048 x 16 heads). Eager
only (HF's MPT has no SDPA path): bf16 / amp / fp32, checkpointing, clip_qkv, generation. Caps: two copies of the
first row under memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the
predictions, then frozen).
Usage: python3 calibrate/cases/make_families49.py > calibrate/cases/families49-input.jsonl"""
import json

from case_helpers import cap_copies, held_out, hf, inference, training

CAP_LO, CAP_HI = 13.0, 14.6  # the uncapped f49-mpt7b6-bf16-b2s1024 row predicted 13554.5 MiB allocated, 14722 reserved (this commit)

ATTN = {"alibi": True, "alibi_bias_max": 8, "attn_impl": "torch", "attn_pdrop": 0, "attn_type": "multihead_attention",
        "attn_uses_sequence_id": False, "clip_qkv": None, "prefix_lm": False, "qk_ln": False, "softmax_scale": None}
M7 = {"d_model": 4096, "n_heads": 32, "n_layers": 6, "expansion_ratio": 4, "max_seq_len": 2048, "vocab_size": 50432,
      "attn_config": ATTN, "emb_pdrop": 0, "resid_pdrop": 0, "learned_pos_emb": True, "no_bias": True,
      "norm_type": "low_precision_layernorm", "layer_norm_epsilon": 1e-05, "use_cache": False}
M7_4 = dict(M7, n_layers=4)
M1 = dict(M7, d_model=2048, n_heads=16, n_layers=8)
M1_CLIP = dict(M1, attn_config=dict(ATTN, clip_qkv=8.0))


def row(id_, cfg, mode, b, seq, prec, gen=0, ckpt=False, cap=None):
    model = hf("mpt", cfg, "eager")
    if mode == "training":
        r = training(id_, model, b, seq, prec, "adamw", ckpt=ckpt)
    else:
        r = inference(id_, model, b, seq, prec, gen)
    return held_out(r, cap)


FIRST = ("f49-mpt7b6-bf16-b2s1024", M7, "training", 2, 1024, "bf16")
rows = [
    row(*FIRST),
    row("f49-mpt1b-ampbf16-b4s1000", M1, "training", 4, 1000, "amp_bf16"),
    row("f49-mpt7b4-fp32-b1s768", M7_4, "training", 1, 768, "fp32"),
    row("f49-mpt7b6-bf16-b3s2048-ckpt", M7, "training", 3, 2048, "bf16", ckpt=True),
    row("f49-mpt1b-clip-bf16-b6s512", M1_CLIP, "training", 6, 512, "bf16"),
    row("f49-mpt7b6-infer-bf16-b4s1000-g16", M7, "inference", 4, 1000, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
