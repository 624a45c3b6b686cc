#!/usr/bin/env python3
"""Twenty-fifth step-time set, held out (issue 17 part 3; written 2026-12-04, eighteenth session): writes
calibrate/cases/timing25-holdout-input.jsonl. The first timed rows of family set 23's model_types: the Mamba2 hybrids
on their PyTorch paths (granitemoehybrid, bamba, falcon_h1, nemotron_h: their chunked SSD is what the new per-element
broadcast pricing is for), Mamba-1 layers (jamba, falcon_mamba), VLMs trained with images (llava, paligemma, idefics3
/ smolvlm), Hugging Face's image classifiers (convnext, convnextv2, swin) and a Swin inference forward. Written
before any of their builders was merged, from the helpers' case widths; pre-registered: predicted at the commit that
merges them (data/validation/predictions/timing25-holdout.json), then timed one at a time by
calibrate/holdout_timing.sh. Each row's step is kept short (the PyTorch scans are slow): a few layers.
"""
import os

from case_helpers import hf, write_holdout
from make_families23 import load
from make_timing21 import train

HERE = os.path.dirname(os.path.abspath(__file__))
hy, h2, jm, lv, ide, vis = (load(n) for n in ("hyb", "hyb2", "jamba", "llava", "idefics", "hfvis"))
M, A = hy.M, hy.A


def fwd(cid, model, prec, b, **extra):
    c = {"id": cid, "model": model, "mode": "inference", "batch_size": b, "precision": prec, "generate_tokens": 0}
    c.update(extra)
    return c


HOLD = [
    train("ht25-gmhtiny-bf16-b4s1024-4l", hf(hy.GMH, hy.gmh(hy.GMH_TINY, [M, M, A, M])), "bf16", 4, 1024),
    train("ht25-gmhmicro-ampbf16-b2s2048-4l", hf(hy.GMH, hy.gmh(hy.GMH_MICRO, [M, A, M, M])), "amp_bf16", 2, 2048),
    train("ht25-bam9b-bf16-b2s1024-3l", hf(hy.BAM, hy.bam(3, [1])), "bf16", 2, 1024),
    train("ht25-fh1-15b-bf16-b4s512-6l", hf(h2.FH1, h2.FH1_15B_6), "bf16", 4, 512),
    train("ht25-nh8b-bf16-b2s1024-8l", hf(h2.NH, h2.NH_8B_8), "bf16", 2, 1024),
    train("ht25-jam-bf16-b2s256-2l", hf("jamba", jm.J2), "bf16", 2, 256),
    train("ht25-fm7b-bf16-b2s256", hf(hy.FM, hy.FM_7B_2, "eager"), "bf16", 2, 256),
    train("ht25-lv7b-bf16-b4s1000-img-4l", hf("llava", lv.llava15(4, 12)), "bf16", 4, 1000, images_per_sample=1),
    train("ht25-pg224-bf16-b8s300-6l", hf("paligemma", lv.pg1(6, 12)), "bf16", 8, 300, images_per_sample=1),
    train("ht25-smv2b-bf16-b2s1200-2img", hf(ide.SMV, ide.smol2b(12, 8)), "bf16", 2, 1200, **ide.img(2, 1, 2)),
    train("ht25-cnxt-ampbf16-b128", hf("convnext", vis.CNX_T, vis._attn("convnext")), "amp_bf16", 128, None),
    train("ht25-cnx2b-bf16-b48", hf("convnextv2", vis.CNX2_B, vis._attn("convnextv2")), "bf16", 48, None),
    train("ht25-swint-ampbf16-b64", hf("swin", vis.SWIN_T), "amp_bf16", 64, None),
    fwd("ht25-swinb384-infer-bf16-b32", hf("swin", vis.SWIN_B384), "bf16", 32),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing25-holdout-input.jsonl"), HOLD))
