#!/usr/bin/env python3
"""Twenty-second step-time set, held out (issue 17 part 3; written 2026-12-03, fifteenth session): writes
calibrate/cases/timing22-holdout-input.jsonl. The first timed rows of family set 17's model_types (olmo3,
ernie4_5_moe, phimoe, albert, mpnet, dinov2, deit, lfm2) at published shapes (the 7B / 21B / 42B decoders cut to a
few layers), typical fine-tuning batches. Written before any of their builders; pre-registered: predicted at the
commit that merges them (data/validation/predictions/timing22-holdout.json), then timed one at a time by
calibrate/holdout_timing.sh.
"""
import os

from case_helpers import write_holdout
from make_families17 import (ALBERT_B, ALBERT_XXL, DEIT_B, DINOV2_B, ERNIE_MOE, LFM2_12, LFM2_350, MPNET, OLMO3,
                             OLMO3_SW, PHIMOE)
from make_timing21 import hf, train

HERE = os.path.dirname(os.path.abspath(__file__))
DINOV2_L518 = dict(DINOV2_B, hidden_size=1024, num_attention_heads=16, num_hidden_layers=8, image_size=518,
                   num_labels=10)

HOLD = [
    train("ht22-olmo3-4l-bf16-b1s4096", hf("olmo3", OLMO3), "bf16", 1, 4096),
    train("ht22-olmo3sw-ampbf16-b2s2048-ckpt", hf("olmo3", OLMO3_SW), "amp_bf16", 2, 2048, ckpt=True),
    train("ht22-erniemoe-3l-bf16-b2s2048", hf("ernie4_5_moe", ERNIE_MOE), "bf16", 2, 2048),
    train("ht22-phimoe-2l-bf16-b1s4096", hf("phimoe", PHIMOE), "bf16", 1, 4096),
    train("ht22-albertb-ampbf16-b32s512", hf("albert", ALBERT_B), "amp_bf16", 32, 512),
    train("ht22-albertxxl-bf16-b8s512", hf("albert", ALBERT_XXL), "bf16", 8, 512),
    train("ht22-mpnet-seqcls-ampbf16-b32s256-eager", hf("mpnet", MPNET, "eager"), "amp_bf16", 32, 256,
          task="seq_cls", num_labels=2),
    train("ht22-dinov2b-ampbf16-b64", hf("dinov2", DINOV2_B), "amp_bf16", 64, None),
    train("ht22-dinov2l518-bf16-b8-8l", hf("dinov2", DINOV2_L518), "bf16", 8, None),
    train("ht22-deitb-ampbf16-b128", hf("deit", DEIT_B), "amp_bf16", 128, None),
    train("ht22-lfm2-bf16-b4s2048", hf("lfm2", LFM2_12), "bf16", 4, 2048),
    train("ht22-lfm2350-ampbf16-b8s1024", hf("lfm2", LFM2_350), "amp_bf16", 8, 1024),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing22-holdout-input.jsonl"), HOLD))
