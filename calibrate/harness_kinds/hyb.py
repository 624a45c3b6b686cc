"""Harness plugin for the Mamba2 / attention hybrids granitemoehybrid and bamba and the Mamba-1 variant falcon_mamba
(family set 23).

Their inputs are plain token ids and their heads plain causal-LM heads, but none of the three types is in
harness.HF_TYPES (and harness.py stays unedited), and falcon_mamba's output carries its recurrent cache as
`cache_params` rather than `past_key_values`. So this plugin builds <Type>ForCausalLM through AutoModelForCausalLM,
draws training batches exactly as the harness does for a causal LM (labels = input ids), and runs the harness's
causal-LM inference (harness._infer_causal: prefill with use_cache=True and logits_to_keep=1, then greedy generate()),
reading the cache from whichever output field holds it. falcon_mamba has no attention (cases say "eager").
Only the standard library is imported at module level."""
import contextlib

MODEL_TYPES = ("granitemoehybrid", "bamba", "falcon_mamba")
KINDS = ("hybrid_ssm_lm",)
FORWARD_KINDS = ()


def build(case, cfg, attn, H):
    import transformers
    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn)
    return model, "hybrid_ssm_lm"


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
    """The harness's causal-LM inference (harness._infer_causal) with the cache read from past_key_values or
    cache_params."""
    return H._infer_causal(case, model, measured, observed, cache_of=_cache_of)
