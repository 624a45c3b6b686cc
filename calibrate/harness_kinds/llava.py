"""Harness plugin: LLaVA (llava, LlavaForConditionalGeneration) and PaliGemma / PaliGemma 2 (paligemma,
PaliGemmaForConditionalGeneration), family set 23, LLaVA-NeXT (llava_next, LlavaNextForConditionalGeneration),
family set 39, and InternVL (internvl, InternVLForConditionalGeneration), family set 40: trained with images, or
text only, and served text only.

Case key `images_per_sample` (data/validation/CASE-FORMAT.md; 0 or absent: text only): each sample holds that many
images of vision_config.image_size (the image processor's resize), n image tokens each:
  llava      n = (image_size / patch_size)^2, + 1 for a CLIP tower (its class position), - 1 with
             vision_feature_select_strategy "default" (processing_llava: LLaVA-1.5 336 / 14 -> 576)
  paligemma  n = (image_size / patch_size)^2 (config.text_config.num_image_tokens: 224 / 14 -> 256)
  llava_next every image has the original size of case key `image_hw` [height, width] (absent: the vision
             config's image_size square); anyres picks its tile grid from config.image_grid_pinpoints
             (select_best_resolution) and n is the processor's count (LlavaNextProcessor._get_number_of_features,
             re-derived in _next_layout): the base tile's features, then the unpadded grid's rows each with one
             image_newline token; T = grid tiles + 1 tiles per image (image_size_to_num_patches)
  llava_onevision  as llava_next for one image a sample, with the modeling file's anyres_max resize of a map
             larger than N base tiles (vision_aspect_ratio "anyres_max_N"; rows and cols then int(x // ratio));
             with several images a sample the processor tiles none (batch_num_images, passed to the model):
             T = 1 and n = the base tile's features + 1 newline
  internvl   every image is case key `image_tiles` T tiles (absent: 1; the processor's crop_to_patches count: the
             grid's crops plus the thumbnail), each of vision_config.image_size (a [h, w] pair in the config);
             n = T * (side * downsample_ratio)^2, side = image_size / patch_size (processing_internvl:
             image_seq_length 256 context tokens per tile at 448 / 14 / 0.5); the processor's <img> / </img>
             tokens around them are ordinary ids here

One training micro-batch, drawn in this order on the GPU (make_batch):
  input_ids       [B, seq_len] int64: random ordinary ids below image_token_index, then the image tokens
                  (config.image_token_id) written in place:
                    llava      from position LLAVA_PREFIX on ("<s>USER: "), each image's n tokens then LLAVA_GAP
                               ordinary tokens (the text after the image)
                    paligemma  all images' n tokens first, then <bos> and the prompt (processing_paligemma
                               build_string_from_input: images, bos, prompt, "\n"; PG_PROMPT tokens in all), then
                               the suffix (the answer) up to seq_len
  token_type_ids  paligemma only: [B, seq_len] int64, 0 on the prefix (images + bos + prompt), 1 on the suffix
  pixel_values    [B * images_per_sample, 3, S, S] randn in the model's dtype (fp32 under amp); llava_next
                  [B * images_per_sample, T, 3, S, S] (the processor's 5-d batch); internvl
                  [B * images_per_sample * T, 3, S, S] (every tile a tower input, image after image), then
  image_sizes     llava_next only: [B * images_per_sample, 2] int64, every row image_hw
  labels          [B, seq_len] int64: llava input_ids with the image tokens set to -100 (masked_fill);
                  paligemma input_ids with the prefix set to -100 (masked_fill on token_type_ids == 0), as the
                  processor's suffix= path returns them
loss = model(**inputs, labels=labels).loss / grad_accum_steps. Text only: input_ids and labels = input_ids (the same
tensor, as the causal-LM harness passes them). Training sets use_cache False on the text config.
Inference (text only): the causal LM protocol of harness._infer_causal (prefill with use_cache=True,
logits_to_keep=1, then greedy generate of generate_tokens), token ids drawn below image_token_index.
"""

MODEL_TYPES = ("llava", "paligemma", "llava_next", "llava_onevision", "internvl")
KINDS = ("vlm_llava",)
FORWARD_KINDS = ()

LLAVA_PREFIX = 4  # ordinary tokens before the first image ("<s>USER: ")
LLAVA_GAP = 3  # ordinary tokens after each image
PG_PROMPT = 8  # <bos>, the prompt's tokens and its "\n", after the image tokens (token_type_ids 0)


def build(case, cfg, attn, H):
    import transformers
    if case["mode"] == "training":
        cfg.get_text_config().use_cache = False
    try:
        model = transformers.AutoModelForImageTextToText.from_config(cfg, attn_implementation=attn)
    except ValueError:
        cls = getattr(transformers, type(cfg).__name__.replace("Config", "ForConditionalGeneration"))
        model = cls._from_config(cfg, attn_implementation=attn)
    return model, "vlm_llava"


def _side(v):
    """An int, or InternVLVisionConfig's [h, w] pair (square)."""
    if isinstance(v, (list, tuple)):
        if len(v) != 2 or int(v[0]) != int(v[1]):
            raise ValueError("llava plugin: only square images / patches are drawn, got %r" % (v,))
        return int(v[0])
    return int(v)


def _internvl_tiles(case):
    T = int(case.get("image_tiles") or 1)
    if T < 1:
        raise ValueError("image_tiles %r: must be a positive integer" % (case.get("image_tiles"),))
    return T


def _internvl_tokens(case, model):
    """internvl: image tokens per image, T tiles of (side * downsample_ratio)^2 each."""
    c = model.config
    vc = c.vision_config
    side = _side(vc.image_size) // _side(vc.patch_size)
    k = int(round(1 / float(c.downsample_ratio)))
    return _internvl_tiles(case) * (side // k) ** 2


def _tokens_per_image(model):
    c = model.config
    vc = c.vision_config
    side = int(vc.image_size) // int(vc.patch_size)
    n = side * side
    if c.model_type == "paligemma":
        return n
    vt = getattr(vc, "model_type", "")
    if vt == "clip_vision_model":
        n += 1
    elif vt != "siglip_vision_model":
        raise ValueError("llava plugin: vision tower %r not drawn (clip_vision_model, siglip_vision_model)" % vt)
    if c.vision_feature_select_strategy == "default":
        n -= 1
    return n


def _next_layout(case, model):
    """llava_next: (image [h, w], tiles per image, image tokens per image), as LlavaNextProcessor counts them."""
    from transformers.image_processing_utils import select_best_resolution
    c = model.config
    vc = c.vision_config
    S, p = int(vc.image_size), int(vc.patch_size)
    oh, ow = (int(v) for v in (case.get("image_hw") or (S, S)))
    ph, pw = select_best_resolution([oh, ow], c.image_grid_pinpoints)
    gh, gw = ph // S, pw // S
    side = S // p
    rows, cols = side * gh, side * gw
    if ow / oh > cols / rows:
        new_h = int(round(oh * (cols / ow), 7))
        rows -= 2 * ((rows - new_h) // 2)
    else:
        new_w = int(round(ow * (rows / oh), 7))
        cols -= 2 * ((cols - new_w) // 2)
    clip = getattr(vc, "model_type", "") == "clip_vision_model"
    base = side * side + (1 if clip else 0) - (1 if c.vision_feature_select_strategy == "default" else 0)
    if c.model_type == "llava_onevision":
        if int(case.get("images_per_sample") or 0) > 1:
            return (oh, ow), 1, base + 1
        import math
        max_patches = int(c.vision_aspect_ratio.strip("anyres_max_"))
        ratio = math.sqrt(rows * cols / (max_patches * side ** 2))
        if ratio > 1.1:
            rows, cols = int(rows // ratio), int(cols // ratio)
    return (oh, ow), gh * gw + 1, base + rows * (cols + 1)


def _layout(case, model):
    """(images per sample, image tokens per image)."""
    k = int(case.get("images_per_sample") or 0)
    if k == 0:
        return 0, 0
    mt = model.config.model_type
    if mt in ("llava_next", "llava_onevision"):
        n = _next_layout(case, model)[2]
    elif mt == "internvl":
        n = _internvl_tokens(case, model)
    else:
        n = _tokens_per_image(model)
    L = int(case["seq_len"])
    if model.config.model_type == "paligemma":
        need = k * n + PG_PROMPT + 1
    else:
        need = LLAVA_PREFIX + k * (n + LLAVA_GAP)
    if need > L:
        raise ValueError("seq_len %d too short for %d images of %d tokens (needs %d)" % (L, k, n, need))
    return k, n


def _ordinary_vocab(model):
    V = int(model.config.get_text_config().vocab_size)
    return min(V, int(model.config.image_token_id))


def _draw(case, model, H):
    import torch
    B, L = int(case["batch_size"]), int(case["seq_len"])
    k, n = _layout(case, model)
    ids = torch.randint(0, _ordinary_vocab(model), (B, L), device="cuda")
    if k == 0:
        return {"input_ids": ids}, ids
    c = model.config
    img = int(c.image_token_id)
    x = {"input_ids": ids}
    if c.model_type == "paligemma":
        ids[:, :k * n] = img
        tt = torch.zeros_like(ids)
        tt[:, k * n + PG_PROMPT:] = 1
        x["token_type_ids"] = tt
    else:
        pos = LLAVA_PREFIX
        for _ in range(k):
            ids[:, pos:pos + n] = img
            pos += n + LLAVA_GAP
    vc = c.vision_config
    S = _side(vc.image_size)
    if c.model_type == "internvl":
        x["pixel_values"] = torch.randn(B * k * _internvl_tiles(case), int(vc.num_channels), S, S, device="cuda",
                                        dtype=H._dtype_of(case["precision"]))
    elif c.model_type in ("llava_next", "llava_onevision"):
        hw, T, _ = _next_layout(case, model)
        x["pixel_values"] = torch.randn(B * k, T, int(vc.num_channels), S, S, device="cuda",
                                        dtype=H._dtype_of(case["precision"]))
        x["image_sizes"] = torch.tensor([list(hw)] * (B * k), dtype=torch.long, device="cuda")
        if c.model_type == "llava_onevision":
            x["batch_num_images"] = [k] * B  # the processor's count (a list: no device tensor)
    else:
        x["pixel_values"] = torch.randn(B * k, int(vc.num_channels), S, S, device="cuda",
                                        dtype=H._dtype_of(case["precision"]))
    if c.model_type == "paligemma":
        labels = ids.masked_fill(x["token_type_ids"] == 0, -100)
    else:
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
    drawn below image_token_index."""
    import torch
    if int(case.get("images_per_sample") or 0) > 0:
        raise ValueError("llava plugin: inference with images is not measured (text-only prompts)")
    B, L = int(case["batch_size"]), int(case["seq_len"])
    ids = torch.randint(0, _ordinary_vocab(model), (B, L), device="cuda")
    return H._infer_causal(case, model, measured, observed, ids=ids)
