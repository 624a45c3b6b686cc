"""Harness plugin: Qwen2-Audio (qwen2_audio, Qwen2AudioForConditionalGeneration), family set 52: trained with audio
clips, or text only, and served text only.

Case key `audio_clips` (data/validation/CASE-FORMAT.md; 0 or absent: text only): each sample holds that many 30 s
clips, each audio_config.max_source_positions * 2 log-mel frames (3000: the Whisper feature extractor's padded
window) of audio_config.num_mel_bins bins, which the encoder turns into n = (max_source_positions - 2) // 2 + 1
audio tokens (_get_feat_extract_output_lengths of a full window: 750). The device has no processor files: the ids,
features and masks are drawn here, in the processor's expanded form (the audio token repeated n times, so the model
takes its masked_scatter path, not the legacy merge).

One training micro-batch, drawn in this order on the GPU (make_batch):
  input_ids               [B, seq_len] int64: random ordinary ids below audio_token_id (config.audio_token_id, or
                          audio_token_index), then, from position PREFIX on, each clip's n audio tokens followed by
                          GAP ordinary tokens (the text after the clip); the rest of the row is text
  input_features          [B * audio_clips, num_mel_bins, 2 * max_source_positions] randn in the model's dtype (fp32
                          under amp)
  feature_attention_mask  [B * audio_clips, 2 * max_source_positions] int64 ones (every frame is audio: no padding,
                          so the encoder's bidirectional mask is skipped for SDPA and eager alike)
  labels                  [B, seq_len] int64: input_ids with the audio tokens set to -100 (masked_fill)
loss = model(**inputs, labels=labels).loss / grad_accum_steps, with no attention_mask (the model then shifts the
logits without masking: logits[..., :-1, :].contiguous()). Text only: input_ids and labels = input_ids (the same
tensor, as the causal-LM harness passes them). Training sets use_cache False on the text config.
Inference (text only): the causal LM protocol of harness._infer_causal (prefill with use_cache=True and
logits_to_keep=1, which Qwen2AudioForConditionalGeneration does not take: it flows into the text model's kwargs
unread and the logits cover every position; then greedy generate of generate_tokens), ids below audio_token_id.
"""

MODEL_TYPES = ("qwen2_audio",)
KINDS = ("audio_lm",)
FORWARD_KINDS = ()

PREFIX = 4  # ordinary tokens before the first clip (the processor's "<|audio_bos|>" and the prompt's start)
GAP = 3  # ordinary tokens after each clip ("<|audio_eos|>" and the prompt)


def build(case, cfg, attn, H):
    import transformers
    if case["mode"] == "training":
        cfg.get_text_config().use_cache = False
    model = transformers.Qwen2AudioForConditionalGeneration._from_config(cfg, attn_implementation=attn)
    return model, "audio_lm"


def _audio_token(model):
    c = model.config
    t = getattr(c, "audio_token_id", None)
    if t is None:
        t = getattr(c, "audio_token_index")
    return int(t)


def _clips(case):
    k = int(case.get("audio_clips") or 0)
    if k < 0:
        raise ValueError("audio_clips %r: must be a non-negative integer" % (case.get("audio_clips"),))
    return k


def _layout(case, model):
    """(clips per sample, audio tokens per clip, mel frames per clip)."""
    k = _clips(case)
    ac = model.config.audio_config
    P = int(ac.max_source_positions)
    frames = 2 * P
    # _get_feat_extract_output_lengths of a whole window: (L - 1) // 2 + 1, then (x - 2) // 2 + 1.
    n = ((frames - 1) // 2 + 1 - 2) // 2 + 1
    if k == 0:
        return 0, n, frames
    L = int(case["seq_len"])
    need = PREFIX + k * (n + GAP)
    if need > L:
        raise ValueError("seq_len %d too short for %d clips of %d audio tokens (needs %d)" % (L, k, n, need))
    return k, n, frames


def _ordinary_vocab(model):
    V = int(model.config.get_text_config().vocab_size)
    return min(V, _audio_token(model))


def _draw(case, model, H):
    import torch
    B, L = int(case["batch_size"]), int(case["seq_len"])
    k, n, frames = _layout(case, model)
    ids = torch.randint(0, _ordinary_vocab(model), (B, L), device="cuda")
    if k == 0:
        return {"input_ids": ids}, ids
    tok = _audio_token(model)
    pos = PREFIX
    for _ in range(k):
        ids[:, pos:pos + n] = tok
        pos += n + GAP
    ac = model.config.audio_config
    x = {"input_ids": ids}
    x["input_features"] = torch.randn(B * k, int(ac.num_mel_bins), frames, device="cuda",
                                      dtype=H._dtype_of(case["precision"]))
    x["feature_attention_mask"] = torch.ones(B * k, frames, dtype=torch.long, device="cuda")
    labels = ids.masked_fill(ids == tok, -100)
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
    drawn below audio_token_id."""
    import torch
    if _clips(case) > 0:
        raise ValueError("qwen2_audio plugin: inference with audio is not measured (text-only prompts)")
    B, L = int(case["batch_size"]), int(case["seq_len"])
    ids = torch.randint(0, _ordinary_vocab(model), (B, L), device="cuda")
    return H._infer_causal(case, model, measured, observed, ids=ids)
