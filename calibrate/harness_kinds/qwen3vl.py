"""Harness plugin: Qwen3-VL (qwen3_vl, qwen3_vl_moe) as <Type>ForConditionalGeneration (AutoModelForImageTextToText).

Training with images (case images_per_sample > 0 and image_grid [t, h, w] in patches): each sample's input_ids are
one text token, then per image vision_start, t*h*w / merge^2 image tokens (config.image_token_id), vision_end, then
text tokens up to seq_len (text ids drawn below the special tokens, 151643); mm_token_type_ids [B, L] int64 (1 at
image tokens, 0 elsewhere, as the processor returns it); pixel_values [B*images*t*h*w, C*temporal*patch*patch] in the
model's dtype (fp32 under amp); image_grid_thw [B*images, 3] int64; labels = input_ids. The batch is built on the CPU
and copied: one GPU allocation per input (ids, token types, pixels randn on the GPU, grid).
Training without images feeds token ids only; inference serves a text prompt, or one laid out with images as in
training (prefill, then generate).
Kind: vlm_qwen3 (training and inference alike)."""

MODEL_TYPES = ("qwen3_vl", "qwen3_vl_moe")
KINDS = ("vlm_qwen3",)
FORWARD_KINDS = ()
TEXT_ID_LIMIT = 151643  # Qwen's special tokens start here: random text ids stay below


def build(case, cfg, attn, H):
    import transformers
    if case["mode"] == "training":
        cfg.text_config.use_cache = False
    model = transformers.AutoModelForImageTextToText.from_config(cfg, attn_implementation=attn)
    # harness._decoder_layers (the grad-checkpointing report) looks for base_model.layers: a plain attribute (not a
    # registered submodule: parameters, state_dict and hooks unchanged) naming the text decoder's layers
    object.__setattr__(model.model, "layers", model.model.language_model.layers)
    return model, "vlm_qwen3"


def _images(case):
    n = int(case.get("images_per_sample", 0) or 0)
    grid = case.get("image_grid")
    if n == 0 or not grid:
        return 0, None
    t, h, w = (int(v) for v in grid)
    return n, (t, h, w)


def _text_ids(model, shape, gen):
    import torch
    V = int(model.config.text_config.vocab_size)
    return torch.randint(0, min(V, TEXT_ID_LIMIT), shape, generator=gen)


def train_batch_fns(case, model, kind, H):
    import torch
    B = int(case["batch_size"])
    L = int(case["seq_len"])
    G = int(case.get("grad_accum_steps", 1) or 1)
    mdtype = H._dtype_of(case["precision"])
    n_img, grid = _images(case)
    cfg = model.config
    vc = cfg.vision_config
    gen = torch.Generator().manual_seed(0)
    if n_img:
        t, h, w = grid
        m = int(vc.spatial_merge_size)
        n_tok = t * h * w // (m * m)
        if 1 + n_img * (n_tok + 2) > L:
            raise ValueError("seq_len %d too short for %d images of %d tokens" % (L, n_img, n_tok))
        patch_dim = int(vc.in_channels) * int(vc.temporal_patch_size) * int(vc.patch_size) ** 2
        n_patch = B * n_img * t * h * w

    def make_batch():
        ids = _text_ids(model, (B, L), gen)
        if not n_img:
            x = {"input_ids": ids.to("cuda")}
            return x, x["input_ids"]
        tt = torch.zeros(B, L, dtype=torch.int64)
        pos = 1
        for _ in range(n_img):
            ids[:, pos] = int(cfg.vision_start_token_id)
            ids[:, pos + 1:pos + 1 + n_tok] = int(cfg.image_token_id)
            tt[:, pos + 1:pos + 1 + n_tok] = 1
            ids[:, pos + 1 + n_tok] = int(cfg.vision_end_token_id)
            pos += n_tok + 2
        x = {"input_ids": ids.to("cuda"), "mm_token_type_ids": tt.to("cuda")}
        x["pixel_values"] = torch.randn(n_patch, patch_dim, device="cuda", dtype=mdtype)
        x["image_grid_thw"] = torch.tensor([[t, h, w]] * (B * n_img), dtype=torch.int64).to("cuda")
        return x, x["input_ids"]

    def fwd_loss(x, y):
        return model(**x, labels=y).loss / G

    return make_batch, fwd_loss


def infer(case, model, kind, measured, observed, H):
    """A prompt [B, seq_len], text or laid out with images as in training (its pixel_values, image_grid_thw and
    mm_token_type_ids given to the prefill and to generate() too): the prefill (use_cache, logits_to_keep=1) and
    generate(), as the harness's causal-LM inference runs them (harness._infer_causal: generate first unless
    generate_first is false)."""
    import torch
    if _images(case)[0]:  # the training layout: input_ids, mm_token_type_ids, pixel_values, image_grid_thw
        x, _ = train_batch_fns(case, model, kind, H)[0]()
        ids = x.pop("input_ids")
        return H._infer_causal(case, model, measured, observed, ids=ids, extra=x)
    B, L = int(case["batch_size"]), int(case["seq_len"])
    ids = _text_ids(model, (B, L), torch.Generator().manual_seed(0)).to("cuda")
    return H._infer_causal(case, model, measured, observed, ids=ids)


def probe(case, model, kind, H):
    """One forward like the measured ones (training: a drawn batch with its loss; inference: the text prompt's
    prefill), results discarded."""
    import contextlib
    import torch
    ac_dtype = H._autocast_dtype(case["precision"])
    ac = torch.autocast("cuda", dtype=ac_dtype) if ac_dtype is not None else contextlib.nullcontext()
    if case["mode"] == "training":
        make_batch, fwd_loss = train_batch_fns(case, model, kind, H)
        x, y = make_batch()
        with ac:
            fwd_loss(x, y)
        return
    if _images(case)[0]:
        x, _ = train_batch_fns(case, model, kind, H)[0]()
        with torch.inference_mode(), ac:
            model(**x, use_cache=True, logits_to_keep=1)
        return
    B, L = int(case["batch_size"]), int(case["seq_len"])
    ids = _text_ids(model, (B, L), torch.Generator().manual_seed(0)).to("cuda")
    with torch.inference_mode(), ac:
        model(input_ids=ids, use_cache=True, logits_to_keep=1)
