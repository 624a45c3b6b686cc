"""Harness plugin for plain causal LMs fed token ids that harness.HF_TYPES does not list: the family-set-21 decoders
(glm, helium, hunyuan_v1_moe, dots1, jetmoe, dbrx) and family set 23's jamba, falcon_h1 and nemotron_h (their hybrid
caches are `past_key_values`; without mamba_ssm / causal_conv1d transformers runs the mixers' PyTorch fallbacks). build() returns the harness's own
kind 'causal_lm', so batches, training steps and generate inference are the harness's unchanged code paths
(KINDS is empty: this plugin claims no kind)."""

MODEL_TYPES = ("glm", "helium", "hunyuan_v1_moe", "dots1", "jetmoe", "dbrx", "jamba", "falcon_h1", "nemotron_h")
KINDS = ()
FORWARD_KINDS = ()


def build(case, cfg, attn, H):
    """AutoModelForCausalLM from the harness's config (use_cache already False when training), as harness.build_model
    builds every causal LM; a task other than none is refused (these rows are causal-LM rows only)."""
    import transformers
    if case.get("task") is not None:
        raise ValueError("harness_kinds.dec: model_type %r supports no task %r" % (case["model"]["model_type"],
                                                                                case.get("task")))
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn)
    return model, "causal_lm"


def train_batch_fns(case, model, kind, H):
    """Never called for kind 'causal_lm' (the harness keeps its own); present for the interface."""
    raise ValueError("harness_kinds.dec claims no kind (got %r)" % kind)
