"""Harness plugin for the state-space causal LMs mamba and mamba2 (family set 21).

Their inputs are plain token ids, but their outputs carry the recurrent cache as `cache_params` (MambaCausalLMOutput)
rather than `past_key_values`, which the harness's own causal-LM inference reads; and an explicit
attn_implementation="sdpa" is refused by transformers for a class without attention (cases set "eager").
So this plugin builds <Type>ForCausalLM through AutoModelForCausalLM, draws training batches exactly as the harness
does for a causal LM (labels = input ids), and runs the harness's inference protocol (prefill with use_cache=True and
logits_to_keep=1, then greedy generate()), reading the cache from whichever output field holds it.
Only the standard library is imported at module level."""
import contextlib
import time

MODEL_TYPES = ("mamba", "mamba2")
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
    """The harness's causal-LM inference (_infer) with the cache read from `cache_params`."""
    import torch
    alloc = torch.cuda.memory_allocated
    peak = torch.cuda.max_memory_allocated
    sync = torch.cuda.synchronize
    B, L = int(case["batch_size"]), int(case["seq_len"])
    N = int(case.get("generate_tokens") or 0)
    ac_dtype = H._autocast_dtype(case["precision"])
    ctx = (lambda: torch.autocast("cuda", dtype=ac_dtype)) if ac_dtype is not None else contextlib.nullcontext
    ids = torch.randint(0, int(model.config.vocab_size), (B, L), device="cuda")
    res = {}

    def prefill():
        sync()
        before = alloc()
        H._reset_peaks()
        t0 = time.perf_counter()
        with torch.inference_mode(), ctx():
            out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
            sync()
            observed["prefill_time_ms"] = round((time.perf_counter() - t0) * 1e3, 2)
            res["pp"] = peak()
            cache = _cache_of(out)
            del out
            measured["prefill_peak_mib"] = H.mib(res["pp"])
            measured["kv_cache_mib"] = H.mib(alloc() - before)
            del cache

    def generate():
        H._reset_peaks()
        t0 = time.perf_counter()
        with torch.inference_mode(), ctx():
            gen = model.generate(ids, max_new_tokens=N, min_new_tokens=N, do_sample=False)
        sync()
        observed["generate_time_ms"] = round((time.perf_counter() - t0) * 1e3, 2)
        res["gp"] = peak()
        observed["generated_shape"] = list(gen.shape)
        del gen

    order = [generate, prefill] if case.get("generate_first", True) and N > 0 else [prefill] + ([generate] if N > 0 else [])
    for f in order:
        f()
    pp, gp = res["pp"], res.get("gp")
    measured["peak_allocated_mib"] = H.mib(max(pp, gp or 0))
    measured["generate_peak_mib"] = H.mib(gp) if gp is not None else None
