#!/usr/bin/env python3
"""Twenty-fourth step-time set, held out (issue 17 part 3; written 2026-12-04, seventeenth session): writes
calibrate/cases/timing24-holdout-input.jsonl. The first timed rows of family set 21's model_types: VLMs trained with
images (qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_vl_moe), contrastive image-text training (clip, siglip), speech
encoders fed waveforms (wav2vec2, hubert: CTC), state-space models on their PyTorch paths (mamba, mamba2), six
decoders (glm, helium, hunyuan_v1_moe, dots1, jetmoe, dbrx), and two inference forwards (SigLIP embeddings,
wav2vec2 features). Written before any of their builders was merged, from the helpers' case widths; pre-registered:
predicted at the commit that merges them (data/validation/predictions/timing24-holdout.json), then timed one at a
time by calibrate/holdout_timing.sh.
"""
import os

from case_helpers import hf, write_holdout
from make_families21 import load
from make_timing21 import train

HERE = os.path.dirname(os.path.abspath(__file__))
q2, q3, cl, au, mb, dc = (load(n) for n in ("qwen2vl", "qwen3vl", "clip", "audio", "mamba", "dec"))


def img(grid, k=1):
    return {"image_grid": grid, "images_per_sample": k}


def speech(cid, mt, config, prec, b, samples, target=None, task=None, mode="training"):
    c = {"id": cid, "model": hf(mt, au.cfg(config, layerdrop=0.0)), "mode": mode, "batch_size": b,
         "audio_samples": samples, "precision": prec}
    if mode == "training":
        c.update({"optimizer": "adamw", "optimizer_impl": "foreach", "grad_checkpointing": False,
                  "grad_accum_steps": 1, "freeze_feature_encoder": True})
    if target is not None:
        c["target_len"] = target
    if task is not None:
        c["task"] = task
    return c


def fwd(cid, model, prec, b, s, **extra):
    c = {"id": cid, "model": model, "mode": "inference", "batch_size": b, "seq_len": s, "precision": prec,
         "generate_tokens": 0}
    c.update(extra)
    return c


HOLD = [
    train("ht24-q2vl2b-bf16-b4s1024-img", hf("qwen2_vl", q2.q2(q2.T2B, 8, 8, True)), "bf16", 4, 1024,
          **img([1, 32, 48])),
    train("ht24-q25vl3b-ampbf16-b2s2048-img", hf("qwen2_5_vl", q2.q25(q2.T3B, 6, 8, [3, 7], True)), "amp_bf16", 2,
          2048, **img([1, 48, 64])),
    train("ht24-q3vl4b-bf16-b2s1500-img2", hf("qwen3_vl", q3.q4b(6, 8, (1, 3, 5))), "bf16", 2, 1500,
          **img([1, 32, 40], 2)),
    train("ht24-q3vlm-bf16-b1s1024-img-2l", hf("qwen3_vl_moe", q3.q30b(2, 4, (1, 2, 3))), "bf16", 1, 1024,
          **img([1, 28, 36])),
    train("ht24-clipl14-ampbf16-b128", hf("clip", cl.CLIP_L14), "amp_bf16", 128, 77),
    train("ht24-sigb16-bf16-b256", hf("siglip", cl.SIG_B16), "bf16", 256, 64),
    speech("ht24-w2vb-ctc-ampbf16-b8-s160000", "wav2vec2", au.W2V_BASE, "amp_bf16", 8, 160000, target=120),
    speech("ht24-hubl12-ctc-bf16-b4-s240000", "hubert", dict(au.HUB_LARGE, num_hidden_layers=12), "bf16", 4, 240000,
           target=200),
    train("ht24-mb370m4l-bf16-b4s512", hf("mamba", dict(mb.MB_130M, hidden_size=1024, num_hidden_layers=4,
                                                       time_step_rank=64), "eager"), "bf16", 4, 512),
    train("ht24-mb2-2b7-bf16-b2s1024", hf("mamba2", mb.MB2_2B7_3, "eager"), "bf16", 2, 1024),
    train("ht24-glm4l-bf16-b2s2048", hf("glm", dc.GLM), "bf16", 2, 2048),
    train("ht24-hel-ampbf16-b4s2048", hf("helium", dc.HEL), "amp_bf16", 4, 2048),
    train("ht24-hy1l-bf16-b2s2048", hf("hunyuan_v1_moe", dc.HY), "bf16", 2, 2048),
    train("ht24-jet-bf16-b4s2048", hf("jetmoe", dc.JET), "bf16", 4, 2048),
    fwd("ht24-sigso400m-infer-bf16-b256", hf("siglip", cl.so400m(27, 27)), "bf16", 256, 64),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing24-holdout-input.jsonl"), HOLD))
