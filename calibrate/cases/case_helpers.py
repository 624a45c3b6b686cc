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
    """Writes `cases` to the JSONL file `path`, one per line, each marked held out (never fitted); returns the count.
    The make_timing*.py held-out sets' writer."""
    import json
    with open(path, "w") as f:
        for c in cases:
            c["holdout"] = True
            f.write(json.dumps(c) + "\n")
    return len(cases)
