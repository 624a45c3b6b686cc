#!/usr/bin/env python3
"""Family set 19, encoder inference (2026-12-03, sixteenth session): one forward of the BERT-like encoders under
model.eval() and torch.inference_mode() (harness _infer_forward: token ids [B, seq_len] without an attention mask,
autocast under amp), across the heads serving teams load: the masked-LM head (logits [B, S, V]), seq_cls, token_cls
and the bare encoder (`task: feature`, AutoModel, with its pooler where the family has one). Published widths and
depths. tuning(): measured before the builder is written (ids f19-ei-*); holdout(): other families, shapes and
settings, predicted at the final commit and measured blind (ids f20-ei-*).
Usage: python3 encinf.py   (JSONL: tuning, then holdout)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference  # noqa: E402

BERT_BASE = {"vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
             "intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 2}
ROBERTA_L = {"vocab_size": 50265, "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
             "intermediate_size": 4096, "max_position_embeddings": 514, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
             "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
XLMR_L = dict(ROBERTA_L, vocab_size=250002)
MODERNBERT_B = {"vocab_size": 50368, "hidden_size": 768, "intermediate_size": 1152, "num_hidden_layers": 22,
                "num_attention_heads": 12, "max_position_embeddings": 8192, "global_attn_every_n_layers": 3,
                "local_attention": 128}
DEBERTA_V3_B = {"vocab_size": 128100, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                "intermediate_size": 3072, "relative_attention": True, "pos_att_type": ["p2c", "c2p"],
                "position_buckets": 256, "max_relative_positions": -1, "norm_rel_ebd": "layer_norm",
                "share_att_key": True, "position_biased_input": False, "max_position_embeddings": 512,
                "type_vocab_size": 0, "layer_norm_eps": 1e-7}
DISTILBERT = {"vocab_size": 30522, "dim": 768, "hidden_dim": 3072, "n_layers": 6, "n_heads": 12,
              "max_position_embeddings": 512}
# holdout: families and heads the tuning rows do not have
ALBERT_XXL = {"vocab_size": 30000, "embedding_size": 128, "hidden_size": 4096, "num_hidden_layers": 12,
              "num_attention_heads": 64, "intermediate_size": 16384, "max_position_embeddings": 1024}
ELECTRA_L = {"vocab_size": 30522, "embedding_size": 1024, "hidden_size": 1024, "num_hidden_layers": 24,
             "num_attention_heads": 16, "intermediate_size": 4096, "layer_norm_eps": 1e-12}
MPNET = {"vocab_size": 30527, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
         "intermediate_size": 3072, "max_position_embeddings": 514, "pad_token_id": 1}


def fwd(id, mt, cfg, b, s, prec, attn="sdpa", task=None, num_labels=None, est=None):
    c = inference(id, hf(mt, cfg, attn), b, s, prec, 0)
    if task is not None:
        c["task"] = task
    if num_labels is not None:
        c["num_labels"] = num_labels
    if est is not None:
        c["_est_gib"] = est
    return c


def tuning():
    return [
        fwd("f19-ei-bertb-mlm-fp32-b64s512", "bert", BERT_BASE, 64, 512, "fp32", est=6),
        fwd("f19-ei-robertal-seqcls-ampbf16-b128s256", "roberta", ROBERTA_L, 128, 256, "amp_bf16", task="seq_cls",
            num_labels=3, est=4),
        fwd("f19-ei-xlmrl-mlm-bf16-b24s500", "xlm-roberta", XLMR_L, 24, 500, "bf16", est=9),
        fwd("f19-ei-modernbertb-feature-bf16-b32s2048", "modernbert", MODERNBERT_B, 32, 2048, "bf16",
            task="feature", est=3),
        fwd("f19-ei-debv3b-tokcls-ampfp16-b32s512-eager", "deberta-v2", DEBERTA_V3_B, 32, 512, "amp_fp16", "eager",
            task="token_cls", num_labels=9, est=5),
        fwd("f19-ei-distilbert-feature-fp16-b256s128", "distilbert", DISTILBERT, 256, 128, "fp16", task="feature",
            est=2),
    ]


def holdout():
    return [
        fwd("f20-ei-albertxxl-feature-fp32-b3s1000", "albert", ALBERT_XXL, 3, 1000, "fp32", task="feature", est=3),
        fwd("f20-ei-electral-mlm-ampfp16-b48s384-eager", "electra", ELECTRA_L, 48, 384, "amp_fp16", "eager", est=5),
        fwd("f20-ei-mpnet-tokcls-bf16-b40s512-eager", "mpnet", MPNET, 40, 512, "bf16", "eager", task="token_cls",
            num_labels=5, est=3),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
