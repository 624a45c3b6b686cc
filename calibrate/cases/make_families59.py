#!/usr/bin/env python3
"""Family set 59 (T5Gemma, t5gemma: T5GemmaForConditionalGeneration), written from the installed transformers 5.17
modeling file without a device: writes calibrate/cases/families59-input.jsonl. Widths follow the google/t5gemma-*
config.json files (models/zoo/README.md says where each came from):
  B/B:   encoder and decoder alike: hidden 768, intermediate 2048, 12 layers of 12 heads (12 kv heads, head_dim 64)
         (full depth here);
  2B-2B: Gemma 2 2B's stacks: hidden 2304, intermediate 9216, 26 layers of 8 heads (4 kv heads, head_dim 256)
         (4 + 4 of its layers here);
  9B-2B: Gemma 2 9B's encoder (hidden 3584, intermediate 14336, 42 layers of 16 heads, 8 kv heads, head_dim 256;
         2 of its layers here) under the 2B decoder (3 of its layers): the cross-attention's k / v read 3584 features.
All: vocabulary 256000, gelu_pytorch_tanh, sliding_window 4096 with alternating layer_types, attention / final
softcapping 50 / 30, dropout_rate 0, tied lm_head.
The one departure from the published files: pad_token_id 255999 (published: 0) in both module configs, with the
top-level vocab_size (read by no module: lm_head has decoder.vocab_size rows) 255999. The harness draws input ids
and labels below the top-level vocab_size, so no id is the pad id and the default attention masks
(make_default_2d_attention_mask: ids != pad) stay all ones, as the replay assumes; with pad 0 about one row in
ten would carry a pad id somewhere and materialise padding masks. Memory is otherwise the published models'.
Rows: amp bf16 / bf16 / fp32 (SDPA), eager (amp bf16, bf16: the softcapped scores and the decoder's materialised
masks), checkpointing, an unbalanced encoder / decoder, generate(). Caps: two copies of the first row under
memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the predictions, then
frozen).
Usage: python3 calibrate/cases/make_families59.py > calibrate/cases/families59-input.jsonl"""
import json

from case_helpers import cap_copies, held_out, hf, inference, training

CAP_LO, CAP_HI = 17.3, 21.0  # the uncapped f59-t5gbb-ampbf16-b6s700t300 row predicted 18316.3 MiB allocated, 20918 reserved (this commit)

PAD = 255999


def alternating(n):
    return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]


def module(hidden, inter, layers, heads, kv, head_dim, scalar):
    return {"attention_bias": False, "attention_dropout": 0.0, "attn_logit_softcapping": 50.0,
            "final_logit_softcapping": 30.0, "head_dim": head_dim, "hidden_activation": "gelu_pytorch_tanh",
            "hidden_size": hidden, "initializer_range": 0.02, "intermediate_size": inter,
            "layer_types": alternating(layers), "max_position_embeddings": 8192, "model_type": "t5_gemma_module",
            "num_attention_heads": heads, "num_hidden_layers": layers, "num_key_value_heads": kv,
            "query_pre_attn_scalar": scalar, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096,
            "vocab_size": 256000, "pad_token_id": PAD, "eos_token_id": 1, "bos_token_id": 2}


def config(enc, dec):
    return {"model_type": "t5gemma", "encoder": enc, "decoder": dec, "dropout_rate": 0.0, "attention_dropout": 0.0,
            "classifier_dropout_rate": 0.0, "is_encoder_decoder": True, "tie_word_embeddings": True,
            "vocab_size": PAD, "pad_token_id": PAD, "eos_token_id": 1, "bos_token_id": 2}


BB = module(768, 2048, 12, 12, 12, 64, 64)
M_BB = config(BB, BB)
M_2B4 = config(module(2304, 9216, 4, 8, 4, 256, 256), module(2304, 9216, 4, 8, 4, 256, 256))
M_9B2B = config(module(3584, 14336, 2, 16, 8, 256, 224), module(2304, 9216, 3, 8, 4, 256, 256))


def row(id_, cfg, mode, b, seq, prec, tgt=0, gen=0, attn="sdpa", ckpt=False, cap=None):
    model = hf("t5gemma", cfg, attn)
    if mode == "training":
        r = training(id_, model, b, seq, prec, "adamw", ckpt=ckpt, target_len=tgt)
    else:
        r = inference(id_, model, b, seq, prec, gen)
    return held_out(r, cap)


FIRST = ("f59-t5gbb-ampbf16-b6s700t300", M_BB, "training", 6, 700, "amp_bf16", 300)
rows = [
    row(*FIRST),
    row("f59-t5gbb-bf16-b5s1000t200", M_BB, "training", 5, 1000, "bf16", 200),
    row("f59-t5gbb-fp32-b3s500t150", M_BB, "training", 3, 500, "fp32", 150),
    row("f59-t5gbb-ampbf16-b4s700t250-eager", M_BB, "training", 4, 700, "amp_bf16", 250, attn="eager"),
    row("f59-t5g2b4-bf16-b3s700t300-ckpt", M_2B4, "training", 3, 700, "bf16", 300, ckpt=True),
    row("f59-t5g2b4-bf16-b3s600t200-eager", M_2B4, "training", 3, 600, "bf16", 200, attn="eager"),
    row("f59-t5g9b2b-bf16-b3s600t128", M_9B2B, "training", 3, 600, "bf16", 128),
    row("f59-t5gbb-infer-bf16-b4s500-g16", M_BB, "inference", 4, 500, "bf16", gen=16),
]
rows += cap_copies(row, FIRST, CAP_LO, CAP_HI)
for r in rows:
    print(json.dumps(r))
