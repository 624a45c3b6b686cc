"""Harness plugin for jamba (AI21 JambaForCausalLM, family set 23): a plain causal LM fed token ids, built here only
because harness.HF_TYPES does not list it. build() returns the harness's own kind 'causal_lm', so batches, training
steps and the prefill + generate inference (the output's hybrid DynamicCache is `past_key_values`) are the harness's
unchanged code paths (KINDS is empty: this plugin claims no kind). Without mamba_ssm / causal_conv1d transformers runs
the mixers' PyTorch fallbacks (the sequential selective scan)."""

MODEL_TYPES = ("jamba",)
KINDS = ()
FORWARD_KINDS = ()


def build(case, cfg, attn, H):
    """AutoModelForCausalLM from the harness's config (use_cache already False when training), as harness.build_model
    builds every causal LM; a task other than none is refused (these rows are causal-LM rows only)."""
    import transformers
    if case.get("task") is not None:
        raise ValueError("harness_kinds.jamba: model_type %r supports no task %r" % (case["model"]["model_type"],
                                                                                   case.get("task")))
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn)
    return model, "causal_lm"


def train_batch_fns(case, model, kind, H):
    """Never called for kind 'causal_lm' (the harness keeps its own); present for the interface."""
    raise ValueError("harness_kinds.jamba claims no kind (got %r)" % kind)
