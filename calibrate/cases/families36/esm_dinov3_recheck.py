#!/usr/bin/env python3
"""Family set 36 (twenty-seventh session): ESM and DINOv3 ViT at shapes and settings their corrected builders were
not fitted on, to check the corrections the set 32 / 35 rows taught (data/validation/NOTES.md "Family sets 32-35
measured"). The model configs are those of sets 32 and 35 (copied from their input files); every other setting is
new: ESM checkpointed under amp, eager at 1022 tokens, fp32 sequence classification with the fused AdamW, the
absolute-position ESM-1b with a token head, a 2000-token masked-LM inference, LoRA on the 35M; DINOv3 at new image
sizes, batch sizes and precisions (eager bf16, fp32, amp_fp16 on the gated MLP).
Writes calibrate/cases/families36-input.jsonl (run from the repository root)."""
import json

SRC32, SRC35 = "calibrate/cases/families32-input.jsonl", "calibrate/cases/families35-input.jsonl"
OUT = "calibrate/cases/families36-input.jsonl"


def model_of(path, case_id):
    for line in open(path):
        c = json.loads(line)
        if c["id"] == case_id:
            return json.loads(json.dumps(c["model"]))
    raise KeyError(case_id)


def train(cid, model, b, s, precision, **kw):
    row = {"id": cid, "model": model, "mode": "training", "batch_size": b, "seq_len": s, "precision": precision,
           "optimizer": "adamw", "optimizer_impl": kw.pop("optimizer_impl", "foreach"),
           "grad_checkpointing": kw.pop("ckpt", False), "grad_accum_steps": 1}
    row.update(kw)
    row["holdout"] = True
    return row


def main():
    esm35 = model_of(SRC32, "f32-esm35-bf16-b16s512")
    esm150 = model_of(SRC32, "f32-esm150-ampbf16-b8s1000")
    esm8 = model_of(SRC32, "f32-esm8-fp32-b24s300")
    esm1b = model_of(SRC32, "f32-esm1b4l-ampbf16-b5s1000")
    esm650 = model_of(SRC32, "f32-esm650-bf16-b6s1022-ckpt")
    esm3b = model_of(SRC32, "f32-esm3b6l-bf16-b3s1000")
    eager150 = json.loads(json.dumps(esm150))
    eager150["attn_implementation"] = "eager"
    rows = [
        train("f36-esm35-ampbf16-b12s700-ckpt", esm35, 12, 700, "amp_bf16", ckpt=True),
        train("f36-esm150-bf16-b4s1022-eager", eager150, 4, 1022, "bf16"),
        train("f36-esm8-seqcls-fp32-fused-b32s256", esm8, 32, 256, "fp32", optimizer_impl="fused",
              task="seq_cls", num_labels=5),
        train("f36-esm1b4l-tokcls-bf16-b4s1000", esm1b, 4, 1000, "bf16", task="token_cls", num_labels=8),
        {"id": "f36-esm650-infer-bf16-b4s2000-mlm", "model": esm650, "mode": "inference", "batch_size": 4,
         "seq_len": 2000, "precision": "bf16", "holdout": True},
        train("f36-esm35-bf16-r8-qkv-b16s512", esm35, 16, 512, "bf16",
              lora={"r": 8, "alpha": 16, "dropout": 0.05, "target_modules": ["query", "key", "value"]}),
        train("f36-esm3b6l-ampbf16-b2s1000", esm3b, 2, 1000, "amp_bf16"),
    ]
    for cid, src, b, img, precision, attn in [
            ("f36-d3s16-infer-ampbf16-b128-i384", "f35-d3s16-infer-bf16-b256", 128, 384, "amp_bf16", "sdpa"),
            ("f36-d3b16-infer-bf16-b32-eager", "f35-d3b16-infer-ampbf16-b96-i448", 32, 224, "bf16", "eager"),
            ("f36-d3l16-infer-fp32-b16-i448", "f35-d3l16-infer-bf16-b48-i512", 16, 448, "fp32", "sdpa"),
            ("f36-d3hp16-infer-ampfp16-b16-i320", "f35-d3hp16-infer-bf16-b24", 16, 320, "amp_fp16", "sdpa")]:
        m = model_of(SRC35, src)
        m["config"]["image_size"] = img
        m["attn_implementation"] = attn
        rows.append({"id": cid, "model": m, "mode": "inference", "batch_size": b, "precision": precision,
                     "task": "feature", "holdout": True})
    # The verdict at two caps around the eager row's predicted reserved peak (10118 MiB at the commit that adds
    # this set): one below, one above.
    for cap in (9.5, 10.3):
        r = json.loads(json.dumps(rows[1]))
        r["id"] += "-cap-%.2f" % cap
        r["memory_cap_gib"] = cap
        rows.append(r)
    with open(OUT, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print("wrote", OUT, len(rows), "rows")


if __name__ == "__main__":
    main()
