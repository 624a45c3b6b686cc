"""Builders for validation-case dicts (data/validation/CASE-FORMAT.md), shared by the make_holdout*.py scripts."""


def hf(model_type, config, attn="sdpa"):
    return {"source": "huggingface", "model_type": model_type, "config": config, "attn_implementation": attn}


def training(id, model, batch, seq, precision, optimizer, impl="foreach", ckpt=False, accum=1, **extra):
    c = {"id": id, "model": model, "mode": "training", "batch_size": batch, "seq_len": seq, "precision": precision,
         "optimizer": optimizer, "optimizer_impl": impl, "grad_checkpointing": ckpt, "grad_accum_steps": accum}
    c.update(extra)
    return c


def vision(id, name, batch, precision, optimizer, impl="foreach", image=224, **extra):
    c = {"id": id, "model": {"source": "torchvision", "name": name}, "mode": "training", "batch_size": batch,
         "image_size": image, "num_classes": 1000, "precision": precision, "optimizer": optimizer,
         "optimizer_impl": impl, "grad_checkpointing": False, "grad_accum_steps": 1}
    c.update(extra)
    return c


def inference(id, model, batch, seq, precision, generate):
    return {"id": id, "model": model, "mode": "inference", "batch_size": batch, "seq_len": seq,
            "precision": precision, "generate_tokens": generate}


def held_out(case, cap=None, **extra):
    """`case` marked held out (predicted before it is measured), with `extra` keys and, when `cap` is given,
    memory_cap_gib, in that order (the make_familiesNN.py rows)."""
    case.update(extra)
    case["holdout"] = True
    if cap is not None:
        case["memory_cap_gib"] = cap
    return case


def cap_copies(row, first, lo, hi):
    """The two capped copies of a set's first row, row(first[0] + "-cap-lo", *first[1:], cap=lo) and "-cap-hi",
    once its caps are set (lo None: none yet, the predictions that fix them not made)."""
    if lo is None:
        return []
    return [row(first[0] + "-cap-lo", *first[1:], cap=lo), row(first[0] + "-cap-hi", *first[1:], cap=hi)]


def capped(case, predicted_reserved_mib, factor, suffix, **extra):
    """A copy of `case` capped at factor x the predicted reserved peak (GiB, 2 decimals); id gets -SUFFIX-<cap>."""
    c = dict(case)
    cap = round(predicted_reserved_mib * factor / 1024, 2)
    c["id"] = "%s-%s-%.2f" % (case["id"], suffix, cap)
    c["memory_cap_gib"] = cap
    c.update(extra)
    return c


def print_cases(cases, argv, caps):
    """Prints `cases`, then caps(case, predicted_reserved_mib) for each case named in argv as id=MiB (the
    reserved peaks memplan predicted before measuring), one JSON object per line."""
    import json
    predicted = dict(a.split("=") for a in argv)
    for c in cases:
        print(json.dumps(c))
    for c in cases:
        if c["id"] in predicted:
            for cc in caps(c, float(predicted[c["id"]])):
                print(json.dumps(cc))


def write_holdout(path, cases):
    """Writes `cases` to the JSONL file `path`, one per line, each marked held out (predicted before it is timed; the
    step-time fit takes it in only once that blind prediction is on record: cli/time_fit.h); returns the count.
    The make_timing*.py held-out sets' writer."""
    import json
    with open(path, "w") as f:
        for c in cases:
            c["holdout"] = True
            f.write(json.dumps(c) + "\n")
    return len(cases)


def load_case_module(subdir, name):
    """The helper case file cases/<subdir>/<name>.py as a module (its tuning() / holdout() and width constants)."""
    import importlib.util
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(subdir + "_" + name, os.path.join(here, subdir, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, here)
    spec.loader.exec_module(mod)
    return mod


def family_set_main(subdir, names, measured_file, argv):
    """The make_familiesNN.py command line: prints as JSONL every helper's tuning() (argv[1] "tuning", the default)
    or holdout() rows of cases/<subdir>/<name>.py, or "final": the held-out rows and the tuning rows that
    data/validation/<measured_file> lacks (the final call's input). A missing case file is said on stderr."""
    import json
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    which = argv[1] if len(argv) > 1 else "tuning"
    present = []
    for n in names:
        if os.path.exists(os.path.join(here, subdir, n + ".py")):
            present.append(n)
        else:
            print("%s: no %s/%s.py" % (os.path.basename(argv[0]), subdir, n), file=sys.stderr)
    if which == "final":
        measured_path = os.path.join(here, "..", "..", "data", "validation", measured_file)
        measured = {json.loads(l)["id"] for l in open(measured_path) if l.strip()}
        for n in present:
            mod = load_case_module(subdir, n)
            for c in mod.holdout() + [c for c in mod.tuning() if c["id"] not in measured]:
                print(json.dumps(c))
        return
    for n in present:
        for c in getattr(load_case_module(subdir, n), which)():
            print(json.dumps(c))


def family_row(model_type, id_, cfg, mode, b, seq, prec, *, gen=0, ckpt=False, accum=1, lora=None, attn="sdpa",
               cap=None):
    """One held-out row of a make_familiesNN.py set: a training step (AdamW, foreach; `lora`: a peft LoRA spec) or an
    inference pass generating `gen` tokens of the Hugging Face `model_type` with config `cfg`, memory_cap_gib `cap`.
    A set binds its model type: row = functools.partial(family_row, "nanochat")."""
    model = hf(model_type, cfg, attn)
    if mode == "training":
        r = training(id_, model, b, seq, prec, "adamw", ckpt=ckpt, accum=accum)
        if lora is not None:
            r["lora"] = lora
    else:
        r = inference(id_, model, b, seq, prec, gen)
    return held_out(r, cap)
