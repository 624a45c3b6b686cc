#!/usr/bin/env python3
"""Family set 42 (Llama 3.2 Vision, mllama: MllamaForConditionalGeneration), written from the modeling file without a
device: writes calibrate/cases/families42-input.jsonl. Widths follow meta-llama/Llama-3.2-11B-Vision (vision 1280 wide,
16 heads, MLP 5120, 560-pixel tiles at patch 14: 1601 positions a tile, padded to 1608; max_num_tiles 4; text 4096
wide, 32 heads / 8 KV, MLP 14336, llama3 rope) with the layers cut so each row stays well under 50 GiB:
  vision: 8 local + 2 global layers (intermediate_layers_indices [0, 2, 4, 6, 7], still 5 of them: vision_output_dim
          7680 and the 7680 -> 4096 projector as published), or fewer where noted (V<local>g<global>);
  text:   5 layers with the published cross_attention_layers list [3, 8, 13, ...] (only layer 3 in range: one
          cross-attention layer; the others match no layer, as in the model), or 3 / 4 layers with the list given;
  vocab:  128256 (published) or cut to 32000 (image_token_index then 32000) where the weights would crowd the row.
Every image is padded to 4 tiles (the processor pads to max_num_tiles): the vision encoder sees 4 x 1608 = 6432
positions per image whatever its aspect ratio, so no tile-count key is needed; images_per_sample is the processor's
max_num_images. The harness lays out one <|image|> token per image after one text token (harness_kinds/mllama.py).
Caps: two copies of the first (bf16) row under memory_cap_gib near its predicted peak (set from the prediction at
the commit that adds this file, then frozen).
Usage: python3 calibrate/cases/make_families42.py > calibrate/cases/families42-input.jsonl"""
import json

CAP_LO, CAP_HI = 29.0, 32.7  # the uncapped f42-mll-bf16-b2s512-2img row predicted 30149.6 MiB allocated, 32534 reserved (this commit)

TEXT = {"model_type": "mllama_text_model", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
        "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
        "rope_theta": 500000.0,
        "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38], "dropout": 0, "pad_token_id": 128004,
        "tie_word_embeddings": False, "num_hidden_layers": 5}
VISION = {"model_type": "mllama_vision_model", "hidden_size": 1280, "intermediate_size": 5120, "attention_heads": 16,
          "hidden_act": "gelu", "image_size": 560, "patch_size": 14, "num_channels": 3, "max_num_tiles": 4,
          "norm_eps": 1e-05, "vision_output_dim": 7680,
          "supported_aspect_ratios": [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]],
          "num_hidden_layers": 8, "num_global_layers": 2, "intermediate_layers_indices": [0, 2, 4, 6, 7]}


def config(text_layers=5, cross=None, vocab=128256, local=8, glob=2, inter=None):
    t = dict(TEXT, num_hidden_layers=text_layers, vocab_size=vocab)
    if cross is not None:
        t["cross_attention_layers"] = cross
    if vocab != 128256:
        t["pad_token_id"] = None
    v = dict(VISION, num_hidden_layers=local, num_global_layers=glob)
    if inter is not None:
        v["intermediate_layers_indices"] = inter
    return {"text_config": t, "vision_config": v, "image_token_index": 128256 if vocab == 128256 else vocab}


def row(id_, cfg, mode, b, seq, prec, images=1, attn="sdpa", ckpt=False, lora=None, gen=0, cap=None):
    r = {"id": id_, "model": {"source": "huggingface", "model_type": "mllama", "config": cfg,
                              "attn_implementation": attn},
         "mode": mode, "batch_size": b, "seq_len": seq, "precision": prec}
    if mode == "training":
        r.update({"optimizer": "adamw", "optimizer_impl": "foreach", "grad_checkpointing": ckpt,
                  "grad_accum_steps": 1, "images_per_sample": images})
    else:
        r["generate_tokens"] = gen
    if lora is not None:
        r["lora"] = lora
    r["holdout"] = True
    if cap is not None:
        r["memory_cap_gib"] = cap
    return r


LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}
V32K = dict(vocab=32000)
rows = [
    row("f42-mll-bf16-b2s512-2img", config(), "training", 2, 512, "bf16", images=2),
    row("f42-mll-ampbf16-b1s400-2img-v32k-t4", config(text_layers=4, cross=[1, 3], **V32K), "training", 1, 400,
        "amp_bf16", images=2),
    row("f42-mll-ampbf16-b3s333-1img-v32k", config(**V32K), "training", 3, 333, "amp_bf16"),
    row("f42-mll-bf16-eager-b1s256-v2g1-v32k-t4", config(text_layers=4, cross=[2], local=2, glob=1,
                                                          inter=[0, 1, 1, 0, 1], **V32K),
        "training", 1, 256, "bf16", attn="eager"),
    row("f42-mll-fp32-b1s256-v4g1-v32k-t3", config(text_layers=3, cross=[1], local=4, glob=1, inter=[0, 1, 2, 3, 3],
                                                    **V32K),
        "training", 1, 256, "fp32"),
    row("f42-mll-bf16-ckpt-b2s1024-1img", config(), "training", 2, 1024, "bf16", ckpt=True),
    row("f42-mll-bf16-lora-b2s512-1img", config(), "training", 2, 512, "bf16", lora=LORA),
    row("f42-mll-bf16-text-b2s1024", config(), "training", 2, 1024, "bf16", images=0),
    row("f42-mll-infer-bf16-b2s512-g16", config(), "inference", 2, 512, "bf16", gen=16),
]
if CAP_LO is not None:
    rows += [
        row("f42-mll-bf16-b2s512-2img-cap-lo", config(), "training", 2, 512, "bf16", images=2, cap=CAP_LO),
        row("f42-mll-bf16-b2s512-2img-cap-hi", config(), "training", 2, 512, "bf16", images=2, cap=CAP_HI),
    ]
for r in rows:
    print(json.dumps(r))
