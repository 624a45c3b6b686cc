#!/usr/bin/env python3
"""Family set 52 (Qwen2-Audio, qwen2_audio: Qwen2AudioForConditionalGeneration), written from the modeling file
without a device: writes calibrate/cases/families52-input.jsonl. Widths follow Qwen/Qwen2-Audio-7B (the
Whisper-large-v3-shape audio encoder: 128 mel bins, 1500 positions, 1280 x 20 heads, FFN 5120; projector 1280 ->
4096; Qwen2-7B-shape text: hidden 4096, 32 / 32 heads, MLP 11008, vocabulary 156032, untied) with the decoder cut to
2 or 3 layers and the audio encoder to 4, 6 or 8, so each row fits well under 50 GiB. Every clip is one 30 s window
(case key audio_clips, clips per sample): 3000 mel frames, 750 audio tokens (derived in
tests/families/test_family_set52_qwen2_audio.cpp). seq_len leaves the harness's layout room: 4 text tokens, then
each clip's 750 audio tokens and 3 more. Caps: two copies of the bf16 eager b4 row (its peak in the backward, not
at the optimizer step) under memory_cap_gib near its predicted peak (set from the prediction at the commit that
adds this file, then frozen).
Usage: python3 calibrate/cases/make_families52.py > calibrate/cases/families52-input.jsonl"""
import json

# The uncapped f52-q2a-bf16-eager-b4s900-a8t2 row predicted 21195.6 MiB allocated, 24278 reserved (this commit).
CAP_LO, CAP_HI = 20.4, 24.4

AUDIO = {"model_type": "qwen2_audio_encoder", "num_mel_bins": 128, "encoder_layers": 32, "encoder_attention_heads": 20,
         "encoder_ffn_dim": 5120, "d_model": 1280, "dropout": 0.0, "attention_dropout": 0.0,
         "activation_function": "gelu", "activation_dropout": 0.0, "encoder_layerdrop": 0.0, "scale_embedding": False,
         "initializer_range": 0.02, "max_source_positions": 1500}
TEXT = {"model_type": "qwen2", "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
        "num_key_value_heads": 32, "num_hidden_layers": 32, "vocab_size": 156032, "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "hidden_act": "silu", "use_sliding_window": False,
        "tie_word_embeddings": False, "bos_token_id": 151643, "eos_token_id": 151645}


def config(text_layers, audio_layers):
    return {"audio_config": dict(AUDIO, encoder_layers=audio_layers),
            "text_config": dict(TEXT, num_hidden_layers=text_layers),
            "audio_token_index": 151646, "ignore_index": -100, "vocab_size": 156032}


def row(id_, tl, al, mode, b, seq, prec, clips=1, attn="sdpa", ckpt=False, lora=None, gen=0, cap=None):
    r = {"id": id_, "model": {"source": "huggingface", "model_type": "qwen2_audio", "config": config(tl, al),
                              "attn_implementation": attn},
         "mode": mode, "batch_size": b, "seq_len": seq, "precision": prec}
    if mode == "training":
        r.update({"optimizer": "adamw", "optimizer_impl": "foreach", "grad_checkpointing": ckpt,
                  "grad_accum_steps": 1, "audio_clips": clips})
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
    row("f52-q2a-ampbf16-b2s1024-a4t2", 2, 4, "training", 2, 1024, "amp_bf16"),
    row("f52-q2a-ampbf16-b2s1600-2clips-a8t2", 2, 8, "training", 2, 1600, "amp_bf16", clips=2),
    row("f52-q2a-bf16-eager-b4s900-a8t2", 2, 8, "training", 4, 900, "bf16", attn="eager"),
    row("f52-q2a-bf16-ckpt-b3s1200-a6t3", 3, 6, "training", 3, 1200, "bf16", ckpt=True),
    row("f52-q2a-bf16-lora-b2s1024-a6t2", 2, 6, "training", 2, 1024, "bf16", lora=LORA),
    row("f52-q2a-bf16-text-b2s2048-a4t2", 2, 4, "training", 2, 2048, "bf16", clips=0),
    row("f52-q2a-fp32-b1s800-a4t2", 2, 4, "training", 1, 800, "fp32"),
    row("f52-q2a-infer-bf16-b2s1024-g16-a4t2", 2, 4, "inference", 2, 1024, "bf16", gen=16),
]
if CAP_LO is not None:
    rows += [
        row("f52-q2a-bf16-eager-b4s900-a8t2-cap-lo", 2, 8, "training", 4, 900, "bf16", attn="eager", cap=CAP_LO),
        row("f52-q2a-bf16-eager-b4s900-a8t2-cap-hi", 2, 8, "training", 4, 900, "bf16", attn="eager", cap=CAP_HI),
    ]
for r in rows:
    print(json.dumps(r))
