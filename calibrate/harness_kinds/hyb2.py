"""Harness plugin for the family-set-23 Mamba2 hybrids falcon_h1 (FalconH1ForCausalLM) and nemotron_h
(NemotronHForCausalLM): plain causal LMs fed token ids, whose outputs carry their hybrid DynamicCache in
past_key_values, built here only because harness.HF_TYPES does not list them. build() returns the harness's own kind
'causal_lm', so batches, training steps and generate inference are the harness's unchanged code paths (KINDS is
empty: this plugin claims no kind). Only the standard library is imported at module level."""

MODEL_TYPES = ("falcon_h1", "nemotron_h")
KINDS = ()
FORWARD_KINDS = ()


def build(case, cfg, attn, H):
    """AutoModelForCausalLM from the harness's config (use_cache already False when training), as harness.build_model
    builds every causal LM; a task other than none is refused (these rows are causal-LM rows only)."""
    import transformers
    if case.get("task") is not None:
        raise ValueError("harness_kinds.hyb2: model_type %r supports no task %r" % (case["model"]["model_type"],
                                                                                 case.get("task")))
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn)
    return model, "causal_lm"


def train_batch_fns(case, model, kind, H):
    """Never called for kind 'causal_lm' (the harness keeps its own); present for the interface."""
    raise ValueError("harness_kinds.hyb2 claims no kind (got %r)" % kind)
