"""Harness plugin for the state-space causal LMs mamba and mamba2 (family set 21), and family set 23's
granitemoehybrid, bamba (Mamba2 / attention hybrids) and falcon_mamba.

Their inputs are plain token ids, but their outputs carry the recurrent cache as `cache_params` (MambaCausalLMOutput)
rather than `past_key_values`, which the harness's own causal-LM inference reads; and an explicit
attn_implementation="sdpa" is refused by transformers for a class without attention (cases set "eager").
So this plugin builds <Type>ForCausalLM through AutoModelForCausalLM, draws training batches exactly as the harness
does for a causal LM (labels = input ids), and runs the harness's inference protocol (prefill with use_cache=True and
logits_to_keep=1, then greedy generate()), reading the cache from whichever output field holds it.
Only the standard library is imported at module level."""
import contextlib

MODEL_TYPES = ("mamba", "mamba2", "granitemoehybrid", "bamba", "falcon_mamba")
KINDS = ("ssm_lm",)
FORWARD_KINDS = ()


def build(case, cfg, attn, H):
    import transformers
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn)
    return model, "ssm_lm"


def train_batch_fns(case, model, kind, H):
    import torch
    B = int(case["batch_size"])
    G = int(case.get("grad_accum_steps", 1) or 1)
    L = int(case["seq_len"])
    V = int(model.config.vocab_size)

    def make_batch():
        ids = torch.randint(0, V, (B, L), device="cuda")
        return ids, ids

    def fwd_loss(x, y):
        return model(input_ids=x, labels=y).loss / G

    return make_batch, fwd_loss


def _cache_of(out):
    for name in ("past_key_values", "cache_params"):
        c = getattr(out, name, None)
        if c is not None:
            return c
    return None


def probe(case, model, kind, H):
    import torch
    ac_dtype = H._autocast_dtype(case["precision"])
    ac = torch.autocast("cuda", dtype=ac_dtype) if ac_dtype is not None else contextlib.nullcontext()
    if case["mode"] == "training":
        make_batch, fwd_loss = train_batch_fns(case, model, kind, H)
        x, y = make_batch()
        with ac:
            fwd_loss(x, y)
        return
    B, L = int(case["batch_size"]), int(case["seq_len"])
    ids = torch.randint(0, int(model.config.vocab_size), (B, L), device="cuda")
    with torch.inference_mode(), ac:
        model(input_ids=ids, use_cache=True, logits_to_keep=1)


def infer(case, model, kind, measured, observed, H):
    """The harness's causal-LM inference (harness._infer_causal) with the cache read from `cache_params` (mamba,
    mamba2, falcon_mamba) or `past_key_values` (the hybrids)."""
    return H._infer_causal(case, model, measured, observed, cache_of=_cache_of)
