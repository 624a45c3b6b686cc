#!/usr/bin/env python3
"""Family set 25 (nineteenth session), held out: two mechanisms found on set 23 / 24's whole-run recordings, tested
on shapes nobody measured, every row predicted at a commit before the call that measures it.
- The Mamba2 hybrids' prefill writes each layer's recurrent state after the chunk scan has returned (its locals
  freed): Falcon-H1 served in bf16 read +87 % reserved before (the state split the segment the next layer's SSD
  product needs). Rows: Falcon-H1 / Nemotron-H / Granite-4.0-H / Bamba served at other batches, lengths, dtypes.
- torch.cumsum's backward (reversed_cumsum: flip, cumsum, flip in one expression) keeps two input-sized
  temporaries: the Mamba2 chunk scan's segment sums and A's cumulative sum, in training.
Widths and helpers from cases/families23/hyb.py and hyb2.py. Usage: python3 hybrid.py  (JSONL)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf, inference, load_case_module, training  # noqa: E402

H1 = load_case_module("families23", "hyb")
H2 = load_case_module("families23", "hyb2")
FH1, NH, GMH, BAM = "falcon_h1", "nemotron_h", "granitemoehybrid", "bamba"
M, A = "mamba", "attention"


def holdout():
    return [
        dict(inference("f25-fh1-15b-infer-bf16-b2s1500-g8-6l", hf(FH1, H2.FH1_15B_6), 2, 1500, "bf16", 8),
             _est_gib=22),
        dict(inference("f25-fh1-7b-infer-ampbf16-b1s1800-g12-4l", hf(FH1, H2.FH1_7B_4), 1, 1800, "amp_bf16", 12),
             _est_gib=19),
        dict(inference("f25-fh1-05b-infer-fp16-b5s700-g16", hf(FH1, H2.FH1_05B), 5, 700, "fp16", 16),
             _est_gib=15),
        dict(inference("f25-nh-8b-infer-bf16-b3s700-g16-9l", hf(NH, H2.NH_8B_9), 3, 700, "bf16", 16),
             _est_gib=26),
        dict(inference("f25-gmh-tiny6-infer-ampbf16-b3s1300-g12",
                       hf(GMH, H1.gmh(H1.GMH_TINY, [M] * 5 + [A])), 3, 1300, "amp_bf16", 12), _est_gib=35),
        dict(inference("f25-bam-9b3-infer-bf16-b3s600-g20", hf(BAM, H1.bam(3, [1])), 3, 600, "bf16", 20),
             _est_gib=44),
        training("f25-fh1-05b-bf16-b3s700", hf(FH1, H2.FH1_05B), 3, 700, "bf16", "adamw", _est_gib=28),
        training("f25-nh-8b-bf16-b1s700-8l-acc2", hf(NH, H2.NH_8B_8), 1, 700, "bf16", "adamw", accum=2,
                 _est_gib=37),
        training("f25-gmh-micro8-bf16-b2s600", hf(GMH, H1.gmh(H1.GMH_MICRO, [M] * 5 + [A] + [M] * 2)), 2, 600,
                 "bf16", "adamw", _est_gib=40),
    ]


if __name__ == "__main__":
    for c in holdout():
        print(json.dumps(c))
