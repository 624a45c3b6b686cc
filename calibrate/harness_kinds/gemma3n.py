"""Harness plugin: Gemma 3n's text decoder (model_type gemma3n_text, Gemma3nForCausalLM), family set 43.

Built as its own class, Gemma3nForCausalLM, from the harness's Gemma3nTextConfig (AutoConfig.for_model), so the
class measured is the one engine/arch/decoders/dense/gemma3n.cpp mirrors whatever the auto mapping of the installed
transformers says. build() returns the harness's own kind 'causal_lm': the training batch (input_ids [B, seq_len],
labels = input_ids), the training step, LoRA and generate() inference are the harness's unchanged code paths (KINDS
is empty: this plugin claims no kind). The multimodal gemma3n (Gemma3nForConditionalGeneration, a timm MobileNetV5
vision tower and an audio conformer) is not claimed: memplan refuses it, and harness.build_model rejects it as an
unsupported model_type."""

MODEL_TYPES = ("gemma3n_text",)
KINDS = ()
FORWARD_KINDS = ()


def build(case, cfg, attn, H):
    """Gemma3nForCausalLM._from_config under the harness's device and default dtype (use_cache already False when
    training); a task other than none is refused (set 43 has causal-LM rows only)."""
    import transformers
    if case.get("task") is not None:
        raise ValueError("harness_kinds.gemma3n: model_type %r supports no task %r"
                         % (case["model"]["model_type"], case.get("task")))
    if type(cfg).__name__ != "Gemma3nTextConfig":
        raise ValueError("harness_kinds.gemma3n: expected a Gemma3nTextConfig, got %s" % type(cfg).__name__)
    model = transformers.Gemma3nForCausalLM._from_config(cfg, attn_implementation=attn)
    return model, "causal_lm"


def train_batch_fns(case, model, kind, H):
    """Never called for kind 'causal_lm' (the harness keeps its own); present for the interface."""
    raise ValueError("harness_kinds.gemma3n claims no kind (got %r)" % kind)
