#!/usr/bin/env python3
"""Twenty-third step-time set, held out (issue 17 part 3; written 2026-12-03, sixteenth session): writes
calibrate/cases/timing23-holdout-input.jsonl. The first timed rows of family set 19's model_types (gemma4_text,
qwen3_next, qwen3_5_text, qwen3_5_moe_text, mistral4, ministral3, minimax_m2, lfm2_moe) at published widths cut to
a few layers, and the first timed encoder / vision inference forwards (prefill_ms: the median of three forwards
after a warm-up, timing_corpus.py). Written before any of their builders was merged; pre-registered: predicted at
the commit that merges them (data/validation/predictions/timing23-holdout.json), then timed one at a time by
calibrate/holdout_timing.sh.
"""
import os

from case_helpers import hf, write_holdout
from make_families19 import load
from make_timing21 import train

HERE = os.path.dirname(os.path.abspath(__file__))
g4, q, m4, mm, ei, vi = (load(n) for n in ("gemma4", "qwen35", "mistral4", "minimax", "encinf", "visinf"))


def fwd(cid, model, prec, b, s=None, **extra):
    c = {"id": cid, "model": model, "mode": "inference", "batch_size": b, "precision": prec}
    if s is not None:
        c["seq_len"] = s
        c["generate_tokens"] = 0
    c.update(extra)
    return c


def tv(name):
    return {"source": "torchvision", "name": name}


HOLD = [
    train("ht23-g4e2b-bf16-b4s2048", hf("gemma4_text", g4.E2B), "bf16", 4, 2048),
    train("ht23-g431b-ampbf16-b1s2048-3l", hf("gemma4_text", g4.G31), "amp_bf16", 1, 2048),
    train("ht23-g4moe-bf16-b2s2048-3l", hf("gemma4_text", g4.MOE), "bf16", 2, 2048),
    train("ht23-q3n64-bf16-b2s2048", hf("qwen3_next", q.Q3N64), "bf16", 2, 2048),
    train("ht23-q35-ampbf16-b1s4096-ckpt", hf("qwen3_5_text", q.Q35_9B), "amp_bf16", 1, 4096, ckpt=True),
    train("ht23-q35m-bf16-b2s2048", hf("qwen3_5_moe_text", q.Q35M), "bf16", 2, 2048),
    train("ht23-m4-bf16-b2s2048", hf("mistral4", m4.M4), "bf16", 2, 2048),
    train("ht23-mi38b-bf16-b2s4096", hf("ministral3", m4.MI3_8), "bf16", 2, 4096),
    train("ht23-mm2e32-bf16-b2s2048", hf("minimax_m2", mm.MM2_E32), "bf16", 2, 2048),
    train("ht23-lfm8-ampbf16-b4s2048", hf("lfm2_moe", mm.LFM8), "amp_bf16", 4, 2048),
    fwd("ht23-ei-bertb-feature-ampbf16-b128s512", hf("bert", ei.BERT_BASE), "amp_bf16", 128, 512, task="feature"),
    fwd("ht23-ei-robertal-seqcls-bf16-b64s512", hf("roberta", ei.ROBERTA_L), "bf16", 64, 512, task="seq_cls",
        num_labels=2),
    fwd("ht23-ei-modernbertb-feature-bf16-b64s1024", hf("modernbert", ei.MODERNBERT_B), "bf16", 64, 1024,
        task="feature"),
    fwd("ht23-vi-resnet50-ampbf16-b256", tv("resnet50"), "amp_bf16", 256, image_size=224, num_classes=1000),
    fwd("ht23-vi-convnextt-ampbf16-b128", tv("convnext_tiny"), "amp_bf16", 128, image_size=224, num_classes=1000),
    fwd("ht23-vi-hfvitb-bf16-b128", hf("vit", vi.VIT_B), "bf16", 128),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing23-holdout-input.jsonl"), HOLD))
