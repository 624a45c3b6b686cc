#!/usr/bin/env python3
"""Family set 45 (LLaVA-OneVision, llava_onevision: LlavaOnevisionForConditionalGeneration), written from the modeling
file without a device: writes calibrate/cases/families45-input.jsonl. Widths follow
llava-hf/llava-onevision-qwen2-0.5b-ov-hf and -7b-ov-hf (SigLIP so400m tower: 1152 x 26 layers, 384-pixel tiles of
14-pixel patches, 27 x 27 = 729 features a tile under the "full" strategy from the last hidden state; 1152 -> H -> H
GELU projector; Qwen2-0.5B text, vocabulary 152000, tied; Qwen2-7B text, vocabulary 152128, untied) with some rows'
tower cut to 12 layers and the 7B decoder to 2 layers. Images (case key image_hw, [height, width]; absent: the
384 square) pick their anyres grid from the default pinpoints (multiples of 384 up to 2304); a sample with several
images tiles none (the processor's batch_num_images): 730 tokens an image. Two rows set vision_aspect_ratio
"anyres_max_2" so that a 2 x 2 grid's 54 x 54 map is resized bilinearly (the modeling file's anyres_max rule,
which "anyres_max_9" applies only past 9 tiles' worth). Token counts derived in
tests/families/test_family_set45_llava_onevision.cpp; seq_len leaves the harness's layout room: 4 text tokens,
then each image's tokens and 3 more (calibrate/harness_kinds/llava.py). Caps: two copies of the first row under
memory_cap_gib near its predicted peak (set from the prediction at the commit that adds the predictions, then
frozen).
Usage: python3 calibrate/cases/make_families45.py > calibrate/cases/families45-input.jsonl"""
import json

from case_helpers import hf, inference, training

CAP_LO, CAP_HI = 33.8, 38.6  # the uncapped f45-ov05-bf16-b2s3800-768 row predicted 35071.1 MiB allocated, 38874 reserved (this commit)

SIGLIP = {"model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
          "num_attention_heads": 16, "num_hidden_layers": 26, "image_size": 384, "patch_size": 14,
          "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-06, "vision_use_head": False}
QWEN05 = {"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
          "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 152000, "hidden_act": "silu",
          "max_position_embeddings": 32768, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
          "use_sliding_window": False, "sliding_window": None, "attention_dropout": 0.0,
          "tie_word_embeddings": True, "bos_token_id": 151643, "eos_token_id": 151645}
QWEN7 = dict(QWEN05, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
             num_key_value_heads=4, vocab_size=152128, tie_word_embeddings=False)


def config(text, text_layers, vision_layers, aspect=None):
    c = {"vision_config": dict(SIGLIP, num_hidden_layers=vision_layers),
         "text_config": dict(text, num_hidden_layers=text_layers),
         "image_token_index": 151646, "video_token_index": 151647, "projector_hidden_act": "gelu",
         "vision_feature_layer": -1, "vision_feature_select_strategy": "full",
         "tie_word_embeddings": text["tie_word_embeddings"]}
    if aspect is not None:
        c["vision_aspect_ratio"] = aspect
    return c


def row(id_, text, tl, vl, mode, b, seq, prec, images=1, hw=None, ckpt=False, lora=None, gen=0, cap=None,
        aspect=None):
    model = hf("llava_onevision", config(text, tl, vl, aspect))
    if mode == "training":
        r = training(id_, model, b, seq, prec, "adamw", ckpt=ckpt, images_per_sample=images)
        if hw is not None:
            r["image_hw"] = hw
    else:
        r = inference(id_, model, b, seq, prec, gen)
    if lora is not None:
        r["lora"] = lora
    r["holdout"] = True
    if cap is not None:
        r["memory_cap_gib"] = cap
    return r


LORA = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}
FIRST = ("f45-ov05-bf16-b2s3800-768", QWEN05, 24, 26, "training", 2, 3800, "bf16")
rows = [
    row(*FIRST, hw=[768, 768]),
    row("f45-ov05-ampbf16-b2s1600-384", QWEN05, 24, 26, "training", 2, 1600, "amp_bf16"),
    row("f45-ov05-bf16-b1s2400-768-max2", QWEN05, 24, 26, "training", 1, 2400, "bf16", hw=[768, 768],
        aspect="anyres_max_2"),
    row("f45-ov05-ampbf16-b2s2400-500x900-max2-v12", QWEN05, 24, 12, "training", 2, 2400, "amp_bf16",
        hw=[500, 900], aspect="anyres_max_2"),
    row("f45-ov05-bf16-b2s1600-2img", QWEN05, 24, 26, "training", 2, 1600, "bf16", images=2),
    row("f45-ov05-bf16-lora-b2s3800-768", QWEN05, 24, 26, "training", 2, 3800, "bf16", hw=[768, 768], lora=LORA),
    row("f45-ov05-bf16-ckpt-b4s1600-384", QWEN05, 24, 26, "training", 4, 1600, "bf16", ckpt=True),
    row("f45-ov05-fp32-b1s2500-400x700-v12", QWEN05, 24, 12, "training", 1, 2500, "fp32", hw=[400, 700]),
    row("f45-ov7-bf16-b1s2000-384-l2", QWEN7, 2, 26, "training", 1, 2000, "bf16"),
    row("f45-ov05-bf16-text-b4s1024", QWEN05, 24, 26, "training", 4, 1024, "bf16", images=0),
    row("f45-ov05-infer-bf16-b4s1024-g16", QWEN05, 24, 26, "inference", 4, 1024, "bf16", gen=16),
]
if CAP_LO is not None:
    rows += [
        row(FIRST[0] + "-cap-lo", *FIRST[1:], hw=[768, 768], cap=CAP_LO),
        row(FIRST[0] + "-cap-hi", *FIRST[1:], hw=[768, 768], cap=CAP_HI),
    ]
for r in rows:
    print(json.dumps(r))
