#!/usr/bin/env python3
"""Family set 43 (Gemma 3n text decoder, gemma3n_text: Gemma3nForCausalLM), written from the modeling file without a
device: writes calibrate/cases/families43-input.jsonl. Widths follow google/gemma-3n-E2B's text_config (hidden 2048,
8 heads / 2 KV heads of 256, MLP 8192, AltUp over 4 streams, LAuReL rank 64, per-layer inputs 256 wide over a
262144-row table, vocabulary 262400, softcap 30) and one row E4B's (MLP 16384), with the layers cut so each row stays
well under 50 GiB; every cut keeps activation-sparsity layers, KV-shared layers and both layer types:
  L12  12 layers, default pattern (full at 4 and 9), sparsity on layers 0-3, the last 4 KV-shared (8 s, 9 f, 10 s,
       11 s read layer 7's and layer 4's keys and values)
  L8   8 layers (full at 4 only), sparsity on 0-2, the last 3 (sliding) KV-shared from layer 3
  L6   6 layers, explicit types s f s s f s, a per-layer intermediate_size list, sparsity on 0-1, the last 2 shared
  L12D 12 layers with activation_sparsity_pattern and num_kv_shared_layers left to their defaults' reading: absent
       pattern -> 0.95 on the first 10 layers; num_kv_shared_layers 0 (layers 9 and 11, the last of each type, still store their keys)
  E2B  the whole google/gemma-3n-E2B text decoder (30 layers), inference only
Caps: two copies of the L12 bf16 b2s1024 row under memory_cap_gib near its predicted peak (set from the prediction at
the commit that adds the predictions, then frozen).
Usage: python3 calibrate/cases/make_families43.py > calibrate/cases/families43-input.jsonl"""
import json

CAP_LO, CAP_HI = 25.5, 29.8  # the uncapped f43-g3n-bf16-b2s1024-l12 row predicted 26566.2 MiB allocated, 30000 reserved (this commit)

E2B = {"model_type": "gemma3n_text", "vocab_size": 262400, "vocab_size_per_layer_input": 262144,
       "hidden_size": 2048, "hidden_size_per_layer_input": 256, "num_attention_heads": 8, "num_key_value_heads": 2,
       "head_dim": 256, "max_position_embeddings": 32768, "sliding_window": 512, "rms_norm_eps": 1e-06,
       "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "attention_bias": False, "attention_dropout": 0.0,
       "hidden_activation": "gelu_pytorch_tanh", "final_logit_softcapping": 30.0, "altup_active_idx": 0,
       "altup_coef_clip": 120.0, "altup_correct_scale": True, "altup_num_inputs": 4, "laurel_rank": 64,
       "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2, "tie_word_embeddings": True}


def types(n, full):
    return ["full_attention" if i in full else "sliding_attention" for i in range(n)]


def sparsity(n, sparse):
    return [0.95] * sparse + [0.0] * (n - sparse)


L12 = dict(E2B, num_hidden_layers=12, intermediate_size=[8192] * 12, layer_types=types(12, (4, 9)),
           activation_sparsity_pattern=sparsity(12, 4), num_kv_shared_layers=4)
L8 = dict(E2B, num_hidden_layers=8, intermediate_size=[8192] * 8, layer_types=types(8, (4,)),
          activation_sparsity_pattern=sparsity(8, 3), num_kv_shared_layers=3)
L6 = dict(E2B, num_hidden_layers=6, intermediate_size=[8192, 8192, 4096, 4096, 8192, 6144],
          layer_types=types(6, (1, 4)), activation_sparsity_pattern=sparsity(6, 2), num_kv_shared_layers=2)
L12D = dict(E2B, num_hidden_layers=12, intermediate_size=8192, num_kv_shared_layers=0)
E4B10 = dict(E2B, num_hidden_layers=10, intermediate_size=[16384] * 10, layer_types=types(10, (4, 9)),
             activation_sparsity_pattern=sparsity(10, 4), num_kv_shared_layers=3)
E2B_FULL = dict(E2B, num_hidden_layers=30, intermediate_size=[8192] * 30, layer_types=types(30, range(4, 30, 5)),
                activation_sparsity_pattern=sparsity(30, 10), num_kv_shared_layers=10)


def row(id_, cfg, mode, b, seq, prec, attn="sdpa", ckpt=False, lora=None, gen=0, cap=None):
    r = {"id": id_, "model": {"source": "huggingface", "model_type": "gemma3n_text", "config": cfg,
                              "attn_implementation": attn},
         "mode": mode, "batch_size": b, "seq_len": seq, "precision": prec}
    if mode == "training":
        r.update({"optimizer": "adamw", "optimizer_impl": "foreach", "grad_checkpointing": ckpt,
                  "grad_accum_steps": 1})
    else:
        r["generate_tokens"] = gen
    if lora is not None:
        r["lora"] = lora
    r["holdout"] = True
    if cap is not None:
        r["memory_cap_gib"] = cap
    return r


LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}
rows = [
    row("f43-g3n-bf16-b2s1024-l12", L12, "training", 2, 1024, "bf16"),
    row("f43-g3n-ampbf16-b1s1536-l8", L8, "training", 1, 1536, "amp_bf16"),
    row("f43-g3n-fp32-b1s480-l6", L6, "training", 1, 480, "fp32"),
    row("f43-g3n-bf16-eager-b2s700-l12", L12, "training", 2, 700, "bf16", attn="eager"),
    row("f43-g3n-bf16-ckpt-b2s1999-l12", L12, "training", 2, 1999, "bf16", ckpt=True),
    row("f43-g3n-bf16-lora-b2s1536-l12", L12, "training", 2, 1536, "bf16", lora=LORA),
    row("f43-g3n-bf16-b5s777-l12d", L12D, "training", 5, 777, "bf16"),
    row("f43-g3n-e4b-bf16-b1s1280-l10", E4B10, "training", 1, 1280, "bf16"),
    row("f43-g3n-e2b-infer-bf16-b2s1024-g16", E2B_FULL, "inference", 2, 1024, "bf16", gen=16),
]
if CAP_LO is not None:
    rows += [
        row("f43-g3n-bf16-b2s1024-l12-cap-lo", L12, "training", 2, 1024, "bf16", cap=CAP_LO),
        row("f43-g3n-bf16-b2s1024-l12-cap-hi", L12, "training", 2, 1024, "bf16", cap=CAP_HI),
    ]
for r in rows:
    print(json.dumps(r))
