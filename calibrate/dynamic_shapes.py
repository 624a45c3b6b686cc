#!/usr/bin/env python3
"""Measures reserved-memory growth when the sequence length changes from step to step (the "fine at first, OOM
after an hour" pattern), for comparison with `memplan dynamic`.

Usage (on a GPU machine): python3 calibrate/dynamic_shapes.py --lens 512,128,1024,... --out result.json
Runs three fresh processes: the lengths as given, the lengths padded to --bucket, and the lengths as given with
PYTORCH_ALLOC_CONF=expandable_segments:True. Each builds GPT-2 small (random weights, no download) under
bf16 autocast with AdamW (foreach), runs one step per length, and records per step the peak allocated and
reserved memory. Writes one JSON object with the three runs.
"""
import argparse
import json
import os
import subprocess
import sys


def run_child(lens, batch):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    with torch.device("cuda"):
        # use_cache=False as in every training case (CASE-FORMAT.md): with the default True, GPT-2 keeps each
        # layer's K and V in a DynamicCache during training (+24 MiB per layer at b8 s1024).
        model = GPT2LMHeadModel(GPT2Config(use_cache=False))
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    steps = []
    for s in lens:
        torch.cuda.reset_peak_memory_stats()
        ids = torch.randint(0, 50257, (batch, s), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        steps.append({"seq_len": s, "peak_allocated_mib": round(torch.cuda.max_memory_allocated() / 2**20, 1),
                      "reserved_mib": round(torch.cuda.memory_reserved() / 2**20, 1),
                      "max_reserved_mib": round(torch.cuda.max_memory_reserved() / 2**20, 1)})
    stats = torch.cuda.memory_stats()
    return {"steps": steps, "num_alloc_retries": stats.get("num_alloc_retries", 0),
            "alloc_conf": os.environ.get("PYTORCH_ALLOC_CONF", "")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lens", required=True)
    ap.add_argument("--bucket", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--out", required=True)
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    lens = [int(x) for x in a.lens.split(",")]
    if a.child:
        print(json.dumps(run_child(lens, a.batch)))
        return
    bucketed = [(x + a.bucket - 1) // a.bucket * a.bucket for x in lens]
    result = {"model": "gpt2", "precision": "amp_bf16", "optimizer": "adamw", "batch_size": a.batch,
              "seq_lens": lens, "bucket": a.bucket}
    for name, ls, conf in (("raw", lens, ""), ("bucketed", bucketed, ""), ("expandable_segments", lens,
                                                                           "expandable_segments:True")):
        env = dict(os.environ)
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        if conf:
            env["PYTORCH_ALLOC_CONF"] = conf
        else:
            env.pop("PYTORCH_ALLOC_CONF", None)
        out = subprocess.run([sys.executable, __file__, "--child", "--lens", ",".join(map(str, ls)),
                              "--batch", str(a.batch), "--out", a.out], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            result[name] = {"error": out.stderr[-2000:]}
        else:
            result[name] = json.loads(out.stdout.strip().splitlines()[-1])
        print(name, json.dumps(result[name])[:300], flush=True)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
