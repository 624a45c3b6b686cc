#!/usr/bin/env python3
"""Packs the installed library sources the builders mirror (transformers modeling files of the families memplan
models, peft's LoRA tuner, torchvision's classification models, torch's FSDP2 / DDP python side) into one tar.gz,
to read on a machine without these packages. Reading material only: nothing of it is committed.
Usage (GPU machine): python3 calibrate/dump_sources.py OUT.tar.gz [FAMILY ...]  (extra transformers model folders)"""
import os
import sys
import tarfile

FAMILIES = ["llama", "mistral", "qwen2", "mixtral", "gemma", "gemma2", "gemma3", "qwen3", "qwen3_moe", "phi3",
            "gpt_neox", "olmo2", "deepseek_v2", "deepseek_v3", "gpt_oss", "starcoder2", "t5", "gpt2", "bert", "esm"]
TV = ["convnext.py", "efficientnet.py", "mobilenetv2.py", "mobilenetv3.py", "swin_transformer.py", "densenet.py",
      "vgg.py", "resnet.py", "regnet.py", "vision_transformer.py", "_utils.py"]


def main():
    out = sys.argv[1]
    import transformers
    import torchvision
    import torch
    paths = []
    tr = os.path.dirname(transformers.__file__)
    for f in FAMILIES + sys.argv[2:]:
        d = os.path.join(tr, "models", f)
        for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if n.startswith(("modeling_", "configuration_", "generation_", "processing_", "image_processing_",
                             "feature_extraction_")) and n.endswith(".py"):
                paths.append(os.path.join(d, n))
    for n in ["masking_utils.py", "modeling_layers.py", "cache_utils.py", "modeling_rope_utils.py",
              "activations.py", "modeling_utils.py", "pytorch_utils.py", "loss/loss_utils.py", "generation/utils.py",
              "integrations/moe.py", "integrations/sdpa_attention.py", "integrations/hub_kernels.py",
              "generation/logits_process.py", "generation/configuration_utils.py"]:
        paths.append(os.path.join(tr, n))
    try:
        import peft
        pd = os.path.dirname(peft.__file__)
        for root in ["tuners/lora", "tuners/tuners_utils.py", "peft_model.py", "utils/other.py", "mapping_func.py"]:
            paths.append(os.path.join(pd, root))
    except ImportError:
        pass
    tv = os.path.join(os.path.dirname(torchvision.__file__), "models")
    paths += [os.path.join(tv, n) for n in TV]
    paths += [os.path.join(os.path.dirname(torchvision.__file__), "ops", n) for n in ["misc.py", "stochastic_depth.py"]]
    td = os.path.dirname(torch.__file__)
    for n in ["distributed/fsdp/_fully_shard", "nn/parallel/distributed.py", "distributed/tensor/parallel/style.py",
              "testing/_internal/distributed/fake_pg.py"]:
        paths.append(os.path.join(td, n))
    with tarfile.open(out, "w:gz") as t:
        for p in paths:
            if os.path.exists(p):
                t.add(p, arcname=os.path.relpath(p, "/"),
                      filter=lambda ti: None if "__pycache__" in ti.name else ti)
    print("packed", len(paths), "paths into", out, os.path.getsize(out), "bytes")


if __name__ == "__main__":
    main()
