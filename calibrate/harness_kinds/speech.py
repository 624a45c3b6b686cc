"""Harness plugin: speech encoders fed raw waveforms (wav2vec2, hubert, wavlm).

Case keys read here (data/validation/CASE-FORMAT.md): audio_samples (samples per example, 16000 a second), task
(absent or "lm": <Type>ForCTC; "seq_cls": <Type>ForSequenceClassification with num_labels; "feature", inference
only: the bare <Type>Model), target_len (CTC labels per example, training), freeze_feature_encoder (bool: the
model's freeze_feature_encoder(), as fine-tuning scripts call it before training).
Inputs: input_values [B, audio_samples] of randn in the model's dtype (fp32 under amp), no attention mask (the base
checkpoints were trained without one). CTC labels [B, target_len] of ids in 1 .. vocab_size - 1 (the pad / blank id
0 excluded); classification labels [B] in 0 .. num_labels - 1.
"""

MODEL_TYPES = ("wav2vec2", "hubert", "wavlm")
KINDS = ("speech_ctc", "speech_cls", "speech_feature")
FORWARD_KINDS = KINDS


def _samples(case):
    n = case.get("audio_samples")
    if n is None:
        raise ValueError("speech cases need audio_samples (samples per example)")
    return int(n)


def build(case, cfg, attn, H):
    import transformers
    task = case.get("task")
    if task in (None, "lm"):
        auto, kind = transformers.AutoModelForCTC, "speech_ctc"
    elif task == "seq_cls":
        cfg.num_labels = int(case.get("num_labels", 2))
        auto, kind = transformers.AutoModelForAudioClassification, "speech_cls"
    elif task == "feature":
        if case["mode"] != "inference":
            raise ValueError("task feature is inference only")
        auto, kind = transformers.AutoModel, "speech_feature"
    else:
        raise ValueError("task %r is not one of a speech encoder (lm / absent: CTC, seq_cls, feature)" % task)
    model = auto.from_config(cfg, attn_implementation=attn)
    if case.get("freeze_feature_encoder"):
        model.freeze_feature_encoder()
    # harness.apply_training_options lists the checkpointed layers through harness._decoder_layers, which looks for
    # base_model.layers: that name points at the encoder's layers (a plain attribute, not a registered submodule, so
    # parameters, state and Module._apply are unchanged).
    base = getattr(model, "base_model", model)
    object.__setattr__(base, "layers", base.encoder.layers)
    return model, kind


def train_batch_fns(case, model, kind, H):
    import torch
    B = int(case["batch_size"])
    G = int(case.get("grad_accum_steps", 1) or 1)
    N = _samples(case)
    mdtype = H._dtype_of(case["precision"])
    if kind == "speech_ctc":
        V = int(model.config.vocab_size)
        T = int(case.get("target_len") or 1)
    elif kind == "speech_cls":
        ncls = int(model.config.num_labels)
    else:
        raise ValueError("kind %r has no training step" % kind)

    def make_batch():
        x = torch.randn(B, N, device="cuda", dtype=mdtype)
        if kind == "speech_ctc":
            return x, torch.randint(1, V, (B, T), device="cuda")
        return x, torch.randint(0, ncls, (B,), device="cuda")

    def fwd_loss(x, y):
        return model(input_values=x, labels=y).loss / G

    return make_batch, fwd_loss


def forward_input(case, model, kind, H):
    import torch
    return torch.randn(int(case["batch_size"]), _samples(case), device="cuda", dtype=H._dtype_of(case["precision"]))


def call_forward(model, kind, x, H):
    return model(input_values=x)
