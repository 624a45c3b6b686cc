#!/usr/bin/env python3
"""Tiny-shape training steps (batch 1, 64 tokens) of models from the timing corpus, each with and without
activation checkpointing (issue 17 part 3, ninth session): at this size the GPU's work is small and the step is
bound by the host, so calibrate/host_issue.py's issue time is the host's cost of the step as the model's Python,
autograd and torch.utils.checkpoint run it. The pairs give checkpointing's host cost per layer in situ, to set
against calibrate/ckpt_host.py's microbenchmark; the plain ones the model's host side per family.

    python3 calibrate/cases/make_host_tiny.py   ->  calibrate/cases/host-tiny-input.jsonl
"""
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BASES = ["hf13-gpt2xl-bf16-adamw-b2s1024-ckpt", "t-gpt2m-ampbf16-adamw-b8s1024-ckpt",
         "hf11-q3_17-ampbf16-adamw-b2s2048-ckpt", "hf11-q3_4b-bf16-adamw-b1s2048-ckpt",
         "hf11-q25_05-ampbf16-adamw-b8s1024-ckpt", "t-l1b-bf16-adamw-b4s2048-ckpt",
         "hf10-gemma2_2b-bf16-adamw-b2s2048-ckpt", "hf10-pythia1_4b-ampbf16-adamw-b4s2048-ckpt"]


def main():
    src = {}
    for f in glob.glob(os.path.join(HERE, "timing*-input.jsonl")):
        for line in open(f):
            if line.strip():
                c = json.loads(line)
                src[c["id"]] = c
    out = []
    for b in BASES:
        for ckpt in (True, False):
            c = json.loads(json.dumps(src[b]))
            c.pop("holdout", None)
            c["batch_size"], c["seq_len"], c["grad_checkpointing"] = 1, 64, ckpt
            stem = b.rsplit("-b", 1)[0] if not b.endswith("-ckpt") else b[:-5].rsplit("-b", 1)[0]
            c["id"] = "ht-%s-b1s64%s" % (stem.split("-", 1)[1], "-ckpt" if ckpt else "")
            out.append(c)
    with open(os.path.join(HERE, "host-tiny-input.jsonl"), "w") as f:
        for c in out:
            f.write(json.dumps(c) + "\n")
    print("\n".join(c["id"] for c in out))


if __name__ == "__main__":
    main()
