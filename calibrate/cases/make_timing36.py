#!/usr/bin/env python3
"""Thirty-sixth step-time set, held out (issue 17 part 3; written 2026-12-06, thirty-sixth session): writes
calibrate/cases/timing36-holdout-input.jsonl (and timing36-h100-holdout-input.jsonl: the same rows with
"gpu": "h100-sxm-80gb"). The first timed rows of the model types family sets 34 .. 61 added
(none of them has a timed step): one training row per type, copied unchanged from its family set's memory input
(already measured for memory, so each is known to fit and to run in seconds) under an `ht36-` id. Rows are ordered
so that a deadline cuts the older, rarer types first. Pre-registered: predicted for the H200 and the H100 SXM
(data/validation/predictions/timing36-holdout.json / timing36-h100-holdout.json) before the call that times them one at a time
(calibrate/holdout_timing.sh); the device's GPU picks which file is the blind prediction.
"""
import json
import os

from case_helpers import write_holdout

HERE = os.path.dirname(os.path.abspath(__file__))

PICKS = [  # (family set, memory case id)
    (61, "f61-m8b-ampbf16-b4s1000"),
    (60, "f60-c2m-ampbf16-b3s700"),
    (58, "f58-v32s-ampbf16-b2s2600"),
    (56, "f56-glm47f-4l-bf16-b5s1000"),
    (43, "f43-g3n-bf16-b2s1024-l12"),
    (42, "f42-mll-bf16-b2s512-2img"),
    (40, "f40-ivl1b-ampbf16-b2s600-t2-v12-l6"),
    (39, "f39-lnx-mis-ampbf16-b2s2400-336x1008-v6"),
    (45, "f45-ov05-ampbf16-b2s1600-384"),
    (54, "f54-d20-ampbf16-b4s1000"),
    (55, "f55-vg1b-ampbf16-b3s700"),
    (57, "f57-mini-4l-bf16-b5s1000"),
    (59, "f59-t5gbb-ampbf16-b6s700t300"),
    (50, "f50-cg350m-ampbf16-b8s1024"),
    (49, "f49-mpt1b-ampbf16-b4s1000"),
    (51, "f51-v2t-ampbf16-b32"),
    (52, "f52-q2a-ampbf16-b2s1024-a4t2"),
    (47, "f47-biogpt-ampbf16-b8s1024"),
    (48, "f48-xlmrxl6-mlm-ampbf16-b8s512"),
    (46, "f46-ernie3b-mlm-ampbf16-b32s512"),
    (38, "f38-beitb-ampbf16-adamw-b32"),
    (37, "f37-segb2-ade512-ampbf16-adamw-b6"),
    (36, "f36-esm35-ampbf16-b12s700-ckpt"),
    (34, "f34-hfr50-ampbf16-sgdmom-b64"),
]


def pick(n, cid):
    with open(os.path.join(HERE, f"families{n}-input.jsonl")) as f:
        for line in f:
            c = json.loads(line)
            if c["id"] == cid:
                c["id"] = "ht36-" + cid[cid.index("-") + 1:]
                c.pop("holdout", None)
                return c
    raise SystemExit(f"{cid} not in families{n}-input.jsonl")


def h100(c):
    """The row as the H100 corpus names and prices it (data/validation/h100-timing.jsonl: h100- ids, a gpu key)."""
    return dict(c, id="h100-" + c["id"], gpu="h100-sxm-80gb")


if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing36-holdout-input.jsonl"), [pick(n, c) for n, c in PICKS]))
    # the same rows priced at the H100 SXM's measured tables (timing36_run.sh times this file on an H100)
    print(write_holdout(os.path.join(HERE, "timing36-h100-holdout-input.jsonl"),
                        [h100(pick(n, c)) for n, c in PICKS]))
