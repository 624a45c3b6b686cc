"""Harness plugin: SegFormer (model_type segformer, family set 37), both of transformers' heads.

Fed as the vision backbones of hfvis.py are (pixel_values [B, num_channels, H, W] of randn in the model's dtype, fp32
under amp, H and W the config's image_size: SegformerConfig has none, so a case config carries one, else 224):
  task absent     AutoModelForImageClassification (SegformerForImageClassification: the MiT encoder, the mean of
                  the last block, one Linear of config.num_labels); training labels [B] of random ids in
                  [0, num_labels).
  "semantic_seg"  AutoModelForSemanticSegmentation (SegformerForSemanticSegmentation: the encoder and the all-MLP
                  decode head); training labels [B, H, W] int64 of random ids in [0, num_labels) (none equal to
                  config.semantic_loss_ignore_index, 255, while num_labels <= 255), made right after the images;
                  the model upsamples its logits to the labels' size and computes CrossEntropyLoss itself.
  inference       the same model, model.eval() under inference_mode, one forward of pixel_values alone.
The label count is the config's (num_labels / id2label); a case's own num_labels key is refused, not ignored.
Kinds: "segformer_image_cls", "segformer_semantic_seg" (training and inference of each).
"""

MODEL_TYPES = ("segformer",)
KINDS = ("segformer_image_cls", "segformer_semantic_seg")
FORWARD_KINDS = KINDS
SEMANTIC_SEG = "semantic_seg"

# The images are hfvis.py's, fed the same way (its _hw, _pixels, forward_input and call_forward).
from . import hfvis  # noqa: E402
_hw, _pixels = hfvis._hw, hfvis._pixels
forward_input, call_forward = hfvis.forward_input, hfvis.call_forward


def build(case, cfg, attn, H):
    import transformers
    task = case.get("task")
    if case.get("num_labels") is not None:
        raise ValueError("a segformer case takes its label count from model.config (num_labels / id2label)")
    if task is None:
        model = transformers.AutoModelForImageClassification.from_config(cfg, attn_implementation=attn)
        kind = "segformer_image_cls"
    elif task == SEMANTIC_SEG:
        model = transformers.AutoModelForSemanticSegmentation.from_config(cfg, attn_implementation=attn)
        kind = "segformer_semantic_seg"
    else:
        raise ValueError("task %r is not one of segformer's (absent: image classification, %s)" % (task, SEMANTIC_SEG))
    return model, kind


def train_batch_fns(case, model, kind, H):
    import torch
    if kind not in KINDS:
        raise ValueError("kind %r is not a segformer kind" % kind)
    B = int(case["batch_size"])
    G = int(case.get("grad_accum_steps", 1) or 1)
    ncls = int(model.config.num_labels)
    h, w = _hw(model)
    label_shape = (B, h, w) if kind == "segformer_semantic_seg" else (B,)

    def make_batch():
        x = _pixels(case, model, H)
        y = torch.randint(0, ncls, label_shape, device="cuda")
        return x, y

    def fwd_loss(x, y):
        return model(pixel_values=x, labels=y).loss / G

    return make_batch, fwd_loss

