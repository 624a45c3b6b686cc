"""Harness plugin: Llama 3.2 Vision (mllama, MllamaForConditionalGeneration), family set 42: trained with images, or
text only, and served text only.

Case key `images_per_sample` (data/validation/CASE-FORMAT.md; 0 or absent: text only): each sample holds that many
images (the processor's max_num_images), each padded to vision_config.max_num_tiles tiles of image_size squares (the
processor always pads to the maximum, so the tile count of an image changes no tensor's size: every image here
uses the whole tile grid). One <|image|> token (config.image_token_id) per image in the text; the vision features
reach the text through the cross-attention layers, not through the token.

One training micro-batch, drawn in this order on the GPU (make_batch):
  input_ids             [B, seq_len] int64: random ordinary ids below text_config.vocab_size, then the <|image|>
                        tokens written at positions 1 .. images_per_sample (position 0 stands for <|begin_of_text|>)
  pixel_values          [B, images_per_sample, max_num_tiles, num_channels, image_size, image_size] randn in the
                        model's dtype (fp32 under amp)
  aspect_ratio_ids      [B, images_per_sample] int64: the id (index + 1) of a supported aspect ratio using every tile
  aspect_ratio_mask     [B, images_per_sample, max_num_tiles] int64 ones
  cross_attention_mask  [B, seq_len, images_per_sample, max_num_tiles] int64: image i attended to from its <|image|>
                        token on (MllamaProcessor's convert_sparse_cross_attention_mask_to_dense: every tile)
  labels                [B, seq_len] int64: input_ids with the <|image|> tokens set to -100 (masked_fill)
loss = model(**inputs, labels=labels).loss / grad_accum_steps. Text only: input_ids and labels = input_ids (the same
tensor, as the causal-LM harness passes them); no pixel_values, so the cross-attention layers are skipped. Training
sets use_cache False on the text config.
Inference (text only): the causal LM protocol of harness._infer_causal (prefill with use_cache=True,
logits_to_keep=1, then greedy generate of generate_tokens), token ids drawn below text_config.vocab_size.
"""

MODEL_TYPES = ("mllama",)
KINDS = ("vlm_mllama",)
FORWARD_KINDS = ()

PREFIX = 1  # <|begin_of_text|> before the <|image|> tokens


def build(case, cfg, attn, H):
    import transformers
    if case["mode"] == "training":
        cfg.get_text_config().use_cache = False
    try:
        model = transformers.AutoModelForImageTextToText.from_config(cfg, attn_implementation=attn)
    except ValueError:
        model = transformers.MllamaForConditionalGeneration._from_config(cfg, attn_implementation=attn)
    return model, "vlm_mllama"


def _ordinary_vocab(model):
    return int(model.config.get_text_config().vocab_size)


def _images(case):
    return int(case.get("images_per_sample") or 0)


def _aspect_ratio_id(vc):
    """1 + the index of the first supported aspect ratio that uses every tile (else of the largest grid)."""
    ratios = [list(r) for r in vc.supported_aspect_ratios]
    tiles = [int(h) * int(w) for h, w in ratios]
    best = max(tiles)
    return 1 + tiles.index(int(vc.max_num_tiles) if int(vc.max_num_tiles) in tiles else best)


def _draw(case, model, H):
    import torch
    B, L = int(case["batch_size"]), int(case["seq_len"])
    k = _images(case)
    ids = torch.randint(0, _ordinary_vocab(model), (B, L), device="cuda")
    if k == 0:
        return {"input_ids": ids}, ids
    if PREFIX + k + 1 > L:
        raise ValueError("seq_len %d too short for %d <|image|> tokens (needs %d)" % (L, k, PREFIX + k + 1))
    c = model.config
    vc = c.vision_config
    img = int(c.image_token_id)
    ids[:, PREFIX:PREFIX + k] = img
    T, S = int(vc.max_num_tiles), int(vc.image_size)
    x = {"input_ids": ids}
    x["pixel_values"] = torch.randn(B, k, T, int(vc.num_channels), S, S, device="cuda",
                                    dtype=H._dtype_of(case["precision"]))
    x["aspect_ratio_ids"] = torch.full((B, k), _aspect_ratio_id(vc), dtype=torch.long, device="cuda")
    x["aspect_ratio_mask"] = torch.ones(B, k, T, dtype=torch.long, device="cuda")
    cam = torch.zeros(B, L, k, T, dtype=torch.long, device="cuda")
    for i in range(k):
        cam[:, PREFIX + i:, i, :] = 1
    x["cross_attention_mask"] = cam
    labels = ids.masked_fill(ids == img, -100)
    return x, labels


def train_batch_fns(case, model, kind, H):
    G = int(case.get("grad_accum_steps", 1) or 1)

    def make_batch():
        return _draw(case, model, H)

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
    """Text-only serving, as harness._infer runs a causal LM (prefill, then generate; generate_first order), token ids
    drawn below the text vocabulary."""
    import torch
    if _images(case) > 0:
        raise ValueError("mllama plugin: inference with images is not measured (text-only prompts)")
    B, L = int(case["batch_size"]), int(case["seq_len"])
    ids = torch.randint(0, _ordinary_vocab(model), (B, L), device="cuda")
    return H._infer_causal(case, model, measured, observed, ids=ids)
