"""Harness plugins: one module per family whose inputs are not plain token ids / images (vision-language models,
contrastive image-text models, speech encoders ...), so a new family does not branch inside harness.py.

A plugin module in this package defines:
    MODEL_TYPES    tuple of Hugging Face model_types it builds (harness.build_model hands them to it)
    KINDS          tuple of the kind strings its build() returns (unique across plugins)
    FORWARD_KINDS  subset of KINDS whose inference is one forward (harness._infer_forward with the plugin's
                   forward_input / call_forward, timed as the encoders' forwards are)
    build(case, cfg, attn, H) -> (model, kind)              cfg: AutoConfig.for_model(...) (use_cache False when
                                                            training); built under the harness's device / dtype
    train_batch_fns(case, model, kind, H) -> (make_batch, fwd_loss)   as harness.train_batch_fns documents
    forward_input(case, model, kind, H) -> x               (FORWARD_KINDS only)
    call_forward(model, kind, x, H)                        (FORWARD_KINDS only)
    probe(case, model, kind, H)                            optional: one forward like the measured ones (SDPA spy)
    infer(case, model, kind, measured, observed, H)        optional: inference of a kind not in FORWARD_KINDS
H is the running harness module itself (sys.modules of harness.py, whether it runs as a script or is imported):
plugins call its helpers through H so the run's reserved-peak bookkeeping stays in one module.
"""
import importlib
import pkgutil

_BY_TYPE = {}
_BY_KIND = {}
FORWARD_KINDS = ()


def _load():
    global FORWARD_KINDS
    fwd = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        mod = importlib.import_module(__name__ + "." + info.name)
        for t in getattr(mod, "MODEL_TYPES", ()):
            if t in _BY_TYPE:
                raise ValueError("model_type %r claimed by harness plugins %s and %s"
                                 % (t, _BY_TYPE[t].__name__, mod.__name__))
            _BY_TYPE[t] = mod
        for k in getattr(mod, "KINDS", ()):
            if k in _BY_KIND:
                raise ValueError("kind %r claimed by harness plugins %s and %s" % (k, _BY_KIND[k].__name__, mod.__name__))
            _BY_KIND[k] = mod
        fwd.extend(getattr(mod, "FORWARD_KINDS", ()))
    FORWARD_KINDS = tuple(fwd)


def for_type(model_type):
    """The plugin building this Hugging Face model_type, or None."""
    return _BY_TYPE.get(model_type)


def for_kind(kind):
    """The plugin that returned this kind from build(), or None (the harness's own kinds)."""
    return _BY_KIND.get(kind)


def model_types():
    return tuple(_BY_TYPE)


_load()


def probe_like_run(case, model, kind, H, train_batch_fns, prompt_inputs):
    """A plugin's probe(): one forward like the measured ones, its results discarded. Training: a batch from the
    plugin's train_batch_fns and its loss under the case's autocast; inference: the prefill of prompt_inputs() (the
    forward's keyword inputs) with use_cache=True and logits_to_keep=1 under inference_mode."""
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
    x = prompt_inputs()
    with torch.inference_mode(), ac:
        model(**x, use_cache=True, logits_to_keep=1)
