"""Harness plugin: Hugging Face vision backbones (family set 23): ConvNeXt, ConvNeXt V2, Swin, Swin V2 and DINOv3 ViT;
ResNet (family set 34); BEiT and Data2Vec-vision (family set 38); Swin V2 (family set 51: Swinv2ForImageClassification,
whose cases name attn_implementation "eager": Swinv2 has no SDPA support and from_config with "sdpa" raises).

harness.py builds AutoModelForImageClassification only for its IMAGE_CLS_TYPES (vit, dinov2, deit); these types
come here and are fed exactly as those are (harness.train_batch_fns / _forward_input, kind image_cls):
  training        AutoModelForImageClassification (<Type>ForImageClassification: the backbone, its pooled output,
                  one Linear of config.num_labels), pixel_values [B, num_channels, H, W] of randn in the model's
                  dtype (fp32 under amp) with H, W the config's image_size, then labels [B] of random ids in
                  [0, num_labels); the loss is the model's own (labels passed to forward).
  inference       the same model (or, with case task "feature", AutoModel: the bare backbone, DINOv3 ViT has no
                  image-classification class), model.eval() under inference_mode, one forward of pixel_values.
Kinds: "hfvis_image_cls" (training and inference of the classifier), "hfvis_feature" (inference of the bare model).
"""

MODEL_TYPES = ("convnext", "convnextv2", "swin", "swinv2", "dinov3_vit", "resnet", "beit", "data2vec-vision")
KINDS = ("hfvis_image_cls", "hfvis_feature")
FORWARD_KINDS = KINDS


def build(case, cfg, attn, H):
    import transformers
    task = case.get("task")
    if task is None:
        model = transformers.AutoModelForImageClassification.from_config(cfg, attn_implementation=attn)
        kind = "hfvis_image_cls"
    elif task == "feature":
        if case["mode"] != "inference":
            raise ValueError("task feature is inference only")
        model = transformers.AutoModel.from_config(cfg, attn_implementation=attn)
        kind = "hfvis_feature"
    else:
        raise ValueError("task %r is not one of a vision backbone (absent: image classification, feature)" % task)
    return model, kind


def _hw(model):
    """(height, width) of the config's image_size (an int, or a pair)."""
    s = getattr(model.config, "image_size", 224)  # ResNetConfig has none: a case config may set it
    if isinstance(s, (list, tuple)):
        return int(s[0]), int(s[1])
    return int(s), int(s)


def _pixels(case, model, H):
    import torch
    h, w = _hw(model)
    c = int(getattr(model.config, "num_channels", 3))
    return torch.randn(int(case["batch_size"]), c, h, w, device="cuda", dtype=H._dtype_of(case["precision"]))


def train_batch_fns(case, model, kind, H):
    import torch
    if kind != "hfvis_image_cls":
        raise ValueError("kind %r has no training step" % kind)
    B = int(case["batch_size"])
    G = int(case.get("grad_accum_steps", 1) or 1)
    ncls = int(model.config.num_labels)

    def make_batch():
        x = _pixels(case, model, H)
        y = torch.randint(0, ncls, (B,), device="cuda")
        return x, y

    def fwd_loss(x, y):
        return model(pixel_values=x, labels=y).loss / G

    return make_batch, fwd_loss


def forward_input(case, model, kind, H):
    return _pixels(case, model, H)


def call_forward(model, kind, x, H):
    return model(pixel_values=x)
