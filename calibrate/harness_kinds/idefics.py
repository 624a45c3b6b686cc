"""Harness plugin: Idefics3 (idefics3, also the SmolVLM v1 checkpoints) and SmolVLM / SmolVLM2 (smolvlm),
<Type>ForConditionalGeneration trained with images, or text only, and served text only (family set 23).

Case keys (data/validation/CASE-FORMAT.md): `images_per_sample` (0 or absent: text only) and `image_splits`
[rows, cols]: the image processor's split of every image into rows x cols tiles of the vision config's image_size
plus the global image (rows * cols + 1 sub-images); [0, 0]: the global image alone (do_image_splitting off, or an
image no larger than one tile). Every sub-image is a full tile (image_size x image_size pixels, no pixel padding)
and gives image_seq_len = (image_size // patch_size) ** 2 // scale_factor ** 2 image tokens.

One training micro-batch, drawn in this order on the GPU (make_batch):
  input_ids            [B, seq_len] int64: random ordinary tokens below config.image_token_id; in every sample, from
                       position 3 on, each image laid out as Idefics3Processor / SmolVLMProcessor lay it out, with
                       the framing tokens (<fake_token_around_image>, <row_i_col_j>, <global-img>, newlines) left
                       as ordinary random tokens (one token each) and the image tokens set to config.image_token_id:
                         split:  for each row: for each col: fake, row_col, image_seq_len image tokens; then a
                                 newline; then a newline, fake, global-img, image_seq_len image tokens, fake
                         global: fake, global-img, image_seq_len image tokens, fake
                       then 2 ordinary tokens before the next image
  pixel_values         [B, images_per_sample * sub-images, 3, S, S] randn in the model's dtype (fp32 under amp),
                       never all zero (no padding image is dropped by real_images_inds)
  pixel_attention_mask [B, images_per_sample * sub-images, S, S] float32 ones (what the image processor returns:
                       torch.zeros(...) of the default dtype, 1 on the real pixels)
labels = input_ids; loss = model(**inputs, labels=labels).loss / grad_accum_steps. No attention_mask. Text only:
input_ids alone. Training sets use_cache False on the text config too.
Inference (text only): the causal LM protocol of harness._infer_causal (prefill with use_cache=True,
logits_to_keep=1, then greedy generate of generate_tokens), token ids drawn below image_token_id.
"""

MODEL_TYPES = ("idefics3", "smolvlm")
KINDS = ("vlm_idefics",)
FORWARD_KINDS = ()

TEXT_PREFIX = 3  # ordinary tokens before the first image ("<|im_start|>User:")
GAP = 2  # ordinary tokens after each image


def build(case, cfg, attn, H):
    import transformers
    if case["mode"] == "training":
        cfg.use_cache = False
        cfg.get_text_config().use_cache = False
    try:
        model = transformers.AutoModelForImageTextToText.from_config(cfg, attn_implementation=attn)
    except ValueError:
        cls = getattr(transformers, type(cfg).__name__.replace("Config", "ForConditionalGeneration"))
        model = cls._from_config(cfg, attn_implementation=attn)
    return model, "vlm_idefics"


def _image_seq_len(model):
    vc = model.config.vision_config
    sf = int(model.config.scale_factor)
    side = int(vc.image_size) // int(vc.patch_size)
    return (side * side) // (sf * sf)


def _layout(case, model):
    """(images per sample, rows, cols, sub-images per image, image tokens per sub-image, tokens per image)."""
    k = int(case.get("images_per_sample") or 0)
    if k == 0:
        return 0, 0, 0, 0, 0, 0
    sp = case.get("image_splits")
    if not sp or len(sp) != 2:
        raise ValueError("idefics plugin: image_splits [rows, cols] is required when images_per_sample > 0")
    rows, cols = int(sp[0]), int(sp[1])
    if (rows == 0) != (cols == 0):
        raise ValueError("image_splits %s: rows and cols are both 0 or both positive" % (sp,))
    n = _image_seq_len(model)
    if rows == 0:
        sub, per_image = 1, n + 3
    else:
        sub = rows * cols + 1
        per_image = rows * (cols * (n + 2) + 1) + 1 + (n + 3)
    L = int(case["seq_len"])
    need = TEXT_PREFIX + k * (per_image + GAP)
    if need > L:
        raise ValueError("seq_len %d too short for %d images of %d tokens (needs %d)" % (L, k, per_image, need))
    return k, rows, cols, sub, n, per_image


def _ordinary_vocab(model):
    V = int(model.config.get_text_config().vocab_size)
    return min(V, int(model.config.image_token_id))


def _draw(case, model, H):
    import torch
    B, L = int(case["batch_size"]), int(case["seq_len"])
    k, rows, cols, sub, n, per_image = _layout(case, model)
    ids = torch.randint(0, _ordinary_vocab(model), (B, L), device="cuda")
    if k == 0:
        return {"input_ids": ids}
    tok = int(model.config.image_token_id)
    pos = TEXT_PREFIX
    for _ in range(k):
        p = pos
        if rows == 0:
            p += 2  # fake, global-img
            ids[:, p:p + n] = tok
        else:
            for _r in range(rows):
                for _c in range(cols):
                    p += 2  # fake, row_col
                    ids[:, p:p + n] = tok
                    p += n
                p += 1  # newline after the row
            p += 3  # newline, fake, global-img
            ids[:, p:p + n] = tok
        pos += per_image + GAP
    vc = model.config.vision_config
    S = int(vc.image_size)
    N = k * sub
    pix = torch.randn(B, N, int(vc.num_channels), S, S, device="cuda", dtype=H._dtype_of(case["precision"]))
    mask = torch.ones(B, N, S, S, device="cuda", dtype=torch.float32)
    return {"input_ids": ids, "pixel_values": pix, "pixel_attention_mask": mask}


def train_batch_fns(case, model, kind, H):
    G = int(case.get("grad_accum_steps", 1) or 1)

    def make_batch():
        x = _draw(case, model, H)
        return x, x["input_ids"]

    def fwd_loss(x, y):
        return model(**x, labels=y).loss / G

    return make_batch, fwd_loss


def probe(case, model, kind, H):
    import torch
    from harness_kinds import probe_like_run

    def prompt():
        B, L = int(case["batch_size"]), int(case["seq_len"])
        return {"input_ids": torch.randint(0, _ordinary_vocab(model), (B, L), device="cuda")}

    probe_like_run(case, model, kind, H, train_batch_fns, prompt)


def infer(case, model, kind, measured, observed, H):
    """Text-only serving, as harness._infer_causal runs a causal LM (prefill, then generate; generate_first order),
    token ids drawn below image_token_id."""
    import torch
    if int(case.get("images_per_sample") or 0) > 0:
        raise ValueError("idefics plugin: inference with images is not measured (text-only prompts)")
    B, L = int(case["batch_size"]), int(case["seq_len"])
    ids = torch.randint(0, _ordinary_vocab(model), (B, L), device="cuda")
    return H._infer_causal(case, model, measured, observed, ids=ids)
