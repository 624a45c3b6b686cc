"""Harness plugin: Qwen2-VL (qwen2_vl) and Qwen2.5-VL (qwen2_5_vl), <Type>ForConditionalGeneration trained with
images, or text only, and served with images or text only.

Case keys (data/validation/CASE-FORMAT.md): `image_grid` [t, h, w] (one image's patches in time, height, width before
the spatial merge; h and w multiples of vision_config.spatial_merge_size) and `images_per_sample` (0 or absent: text
only). Each image becomes t*h*w / merge^2 image tokens in the text.

One training micro-batch, drawn in this order on the GPU (make_batch):
  input_ids          [B, seq_len] int64: random ordinary tokens below vision_start_token_id; in every sample, from
                     position 3 on, each image as the processor lays it out: <|vision_start|>, its image tokens
                     (config.image_token_id), <|vision_end|>, then 2 ordinary tokens before the next image
  mm_token_type_ids  [B, seq_len] int64: 1 at the image tokens, 0 elsewhere (what the processor returns)
  pixel_values       [B * images_per_sample * t*h*w, in_channels * temporal_patch_size * patch_size^2] randn in the
                     model's dtype (fp32 under amp), as the image processor flattens the patches
  image_grid_thw     [B * images_per_sample, 3] int64, every row [t, h, w]
labels = input_ids; loss = model(**inputs, labels=labels).loss / grad_accum_steps. Text only: input_ids alone.
Training sets use_cache False on the text config too (the outer config's flag does not reach the text model).
Inference: the causal LM protocol of harness._infer_causal (prefill with use_cache=True, logits_to_keep=1, then
greedy generate of generate_tokens), token ids drawn below vision_start_token_id; with images the prompt is laid out
as in training and pixel_values, image_grid_thw and mm_token_type_ids go to the prefill and to generate().
"""

MODEL_TYPES = ("qwen2_vl", "qwen2_5_vl")
KINDS = ("vlm_qwen2",)
FORWARD_KINDS = ()

TEXT_PREFIX = 3  # ordinary tokens before the first image ("<|im_start|>user\n")
GAP = 2  # ordinary tokens after each image's <|vision_end|>


def build(case, cfg, attn, H):
    import transformers
    if case["mode"] == "training":
        cfg.get_text_config().use_cache = False
    try:
        model = transformers.AutoModelForImageTextToText.from_config(cfg, attn_implementation=attn)
    except ValueError:
        cls = getattr(transformers, type(cfg).__name__.replace("Config", "ForConditionalGeneration"))
        model = cls._from_config(cfg, attn_implementation=attn)
    return model, "vlm_qwen2"


def _layout(case, model):
    """(images per sample, grid [t, h, w] or None, image tokens per image)."""
    k = int(case.get("images_per_sample") or 0)
    grid = case.get("image_grid")
    if k == 0 or not grid:
        return 0, None, 0
    t, h, w = (int(v) for v in grid)
    m = int(model.config.vision_config.spatial_merge_size)
    if h % m or w % m:
        raise ValueError("image_grid %s: h and w must be multiples of spatial_merge_size %d" % (grid, m))
    n = t * h * w // (m * m)
    L = int(case["seq_len"])
    need = TEXT_PREFIX + k * (n + 2 + GAP)
    if need > L:
        raise ValueError("seq_len %d too short for %d images of %d tokens (needs %d)" % (L, k, n, need))
    return k, (t, h, w), n


def _ordinary_vocab(model):
    V = int(model.config.get_text_config().vocab_size)
    return min(V, int(model.config.vision_start_token_id))


def _draw(case, model, H):
    import torch
    B, L = int(case["batch_size"]), int(case["seq_len"])
    k, grid, n = _layout(case, model)
    ids = torch.randint(0, _ordinary_vocab(model), (B, L), device="cuda")
    if k == 0:
        return {"input_ids": ids}
    c = model.config
    mm = torch.zeros_like(ids)
    pos = TEXT_PREFIX
    for _ in range(k):
        ids[:, pos] = int(c.vision_start_token_id)
        ids[:, pos + 1:pos + 1 + n] = int(c.image_token_id)
        mm[:, pos + 1:pos + 1 + n] = 1
        ids[:, pos + 1 + n] = int(c.vision_end_token_id)
        pos += n + 2 + GAP
    vc = c.vision_config
    t, h, w = grid
    width = int(vc.in_channels) * int(vc.temporal_patch_size) * int(vc.patch_size) ** 2
    pix = torch.randn(B * k * t * h * w, width, device="cuda", dtype=H._dtype_of(case["precision"]))
    thw = torch.tensor([[t, h, w]] * (B * k), device="cuda", dtype=torch.long)
    return {"input_ids": ids, "mm_token_type_ids": mm, "pixel_values": pix, "image_grid_thw": thw}


def train_batch_fns(case, model, kind, H):
    G = int(case.get("grad_accum_steps", 1) or 1)

    def make_batch():
        x = _draw(case, model, H)
        return x, x["input_ids"]

    def fwd_loss(x, y):
        return model(**x, labels=y).loss / G

    return make_batch, fwd_loss


def probe(case, model, kind, H):
    from harness_kinds import probe_like_run
    probe_like_run(case, model, kind, H, train_batch_fns, lambda: _draw(case, model, H))


def infer(case, model, kind, measured, observed, H):
    """Serving, as harness._infer runs a causal LM (prefill, then generate; generate_first order): token ids drawn
    below vision_start_token_id; with images_per_sample > 0 the prompt is the training batch's layout (_draw:
    input_ids, mm_token_type_ids, pixel_values, image_grid_thw), all given to the prefill's forward and to
    generate() (whose first forward runs the vision tower; the decode steps reuse the cached rope_deltas)."""
    x = _draw(case, model, H)
    ids = x.pop("input_ids")
    return H._infer_causal(case, model, measured, observed, ids=ids, extra=x)
