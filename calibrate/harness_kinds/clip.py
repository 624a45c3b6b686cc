"""Harness plugin: contrastive image-text models (CLIP, SigLIP, SigLIP 2 NaFlex), family set 21.

Built with AutoModel (CLIPModel / SiglipModel / Siglip2Model) from AutoConfig.for_model(model_type, text_config=...,
vision_config=..., ...). One batch is B images and B captions:
  pixel_values  clip / siglip: [B, 3, S, S] with S the vision config's image_size (the image processor's resize), in
                the model's dtype (fp32 under amp)
                siglip2 (NaFlex): [B, max_num_patches, 3 * patch_size ** 2] already patchified, as Siglip2ImageProcessor
                returns it, with pixel_attention_mask [B, max_num_patches] (int32: 1 on the h * w real patches, 0 on
                the padding) and spatial_shapes [B, 2] (int64: h, w); h, w from the case's image_grid [1, h, w],
                max_num_patches from the case key (default h * w: no padding)
  input_ids     [B, seq_len] random ids (the tokenizer's padding="max_length" length: 77 for CLIP, 64 for SigLIP)
                without an attention mask, as SigLIP's processor returns them
Kinds: "contrastive" (training: model(..., return_loss=True).loss: CLIP's symmetric cross entropy, SigLIP's
sigmoid loss) and "contrastive_forward" (inference: one forward without the loss, under inference_mode; the output
holds both towers' last hidden states, pooled outputs, embeddings and the B x B logits until it is dropped).
"""

MODEL_TYPES = ("clip", "siglip", "siglip2")
KINDS = ("contrastive", "contrastive_forward")
FORWARD_KINDS = ("contrastive_forward",)


def build(case, cfg, attn, H):
    import transformers
    model = transformers.AutoModel.from_config(cfg, attn_implementation=attn)
    kind = "contrastive" if case["mode"] == "training" else "contrastive_forward"
    return model, kind


def _grid(case, model):
    """(h, w, max_num_patches) of a siglip2 case."""
    g = case.get("image_grid")
    if not g or len(g) != 3 or int(g[0]) != 1:
        raise ValueError("siglip2 cases need image_grid [1, h, w] (patches in height and width)")
    h, w = int(g[1]), int(g[2])
    p = int(case.get("max_num_patches") or h * w)
    if h * w > p:
        raise ValueError("image_grid h * w = %d exceeds max_num_patches %d" % (h * w, p))
    return h, w, p


def _inputs(case, model, H):
    """The batch as a dict of forward keyword arguments, on the GPU, allocated in this order: pixel values (and the
    siglip2 mask and shapes), then the token ids."""
    import torch
    B = int(case["batch_size"])
    L = int(case["seq_len"])
    mdtype = H._dtype_of(case["precision"])
    vc = model.config.vision_config
    tc = model.config.text_config
    x = {}
    if model.config.model_type == "siglip2":
        h, w, P = _grid(case, model)
        ps = int(vc.patch_size)
        x["pixel_values"] = torch.randn(B, P, int(vc.num_channels) * ps * ps, device="cuda", dtype=mdtype)
        mask = torch.zeros(B, P, dtype=torch.int32, device="cuda")
        mask[:, : h * w] = 1
        x["pixel_attention_mask"] = mask
        x["spatial_shapes"] = torch.tensor([[h, w]] * B, dtype=torch.long, device="cuda")
    else:
        S = int(vc.image_size)
        x["pixel_values"] = torch.randn(B, int(vc.num_channels), S, S, device="cuda", dtype=mdtype)
    x["input_ids"] = torch.randint(0, int(tc.vocab_size), (B, L), device="cuda")
    return x


def train_batch_fns(case, model, kind, H):
    G = int(case.get("grad_accum_steps", 1) or 1)

    def make_batch():
        return _inputs(case, model, H), None

    def fwd_loss(x, y):
        return model(**x, return_loss=True).loss / G

    return make_batch, fwd_loss


def forward_input(case, model, kind, H):
    return _inputs(case, model, H)


def call_forward(model, kind, x, H):
    return model(**x)
