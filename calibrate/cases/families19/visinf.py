#!/usr/bin/env python3
"""Family set 19, vision inference (image-classification serving): torchvision classifiers and transformers' image
classifiers under model.eval() + torch.inference_mode() (+ autocast under amp), one forward of random images
[B, 3, S, S] (calibrate/harness.py _infer_forward). Tuning rows (f19-vi-*) are measured with whole-run allocator
recordings before the builders exist; held-out rows (f20-vi-*) are other families, sizes and batches, predicted
before they are measured.
Usage: python3 visinf.py > visinf.jsonl   (tuning rows, then held-out rows, one JSON object per line)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf  # noqa: E402

VIT_B = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
         "image_size": 224, "patch_size": 16, "num_labels": 1000}
DINOV2_B = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "image_size": 224,
            "patch_size": 14, "num_labels": 1000}


def tv(id, name, batch, precision, image=224, classes=1000, est=2.0):
    """A torchvision classifier served: no optimizer keys (inference), images of `image` pixels."""
    return {"id": id, "model": {"source": "torchvision", "name": name}, "mode": "inference", "batch_size": batch,
            "image_size": image, "num_classes": classes, "precision": precision, "_est_gib": est}


def hf_image(id, model_type, config, batch, precision, attn="sdpa", est=2.0):
    """A transformers image classifier served: the image size comes from the config (no image_size key)."""
    return {"id": id, "model": hf(model_type, config, attn), "mode": "inference", "batch_size": batch,
            "precision": precision, "_est_gib": est}


def tuning():
    return [
        tv("f19-vi-resnet50-ampbf16-b256", "resnet50", 256, "amp_bf16", est=2.5),
        tv("f19-vi-effb0-fp32-b128", "efficientnet_b0", 128, "fp32", est=3.0),
        tv("f19-vi-convnextt-bf16-b64", "convnext_tiny", 64, "bf16", est=1.0),
        tv("f19-vi-swint-ampfp16-b64", "swin_t", 64, "amp_fp16", est=1.5),
        tv("f19-vi-densenet121-bf16-b100", "densenet121", 100, "bf16", est=2.5),
        hf_image("f19-vi-hfvitb-fp32-b64", "vit", VIT_B, 64, "fp32", est=1.5),
    ]


def holdout():
    return [
        tv("f20-vi-mnv3l-ampfp16-b200-i256", "mobilenet_v3_large", 200, "amp_fp16", image=256, est=3.0),
        tv("f20-vi-vgg16bn-ampbf16-b96", "vgg16_bn", 96, "amp_bf16", est=3.5),
        hf_image("f20-vi-hfdinov2b-ampbf16-b48", "dinov2", DINOV2_B, 48, "amp_bf16", est=1.5),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
