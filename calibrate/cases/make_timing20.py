#!/usr/bin/env python3
"""Twentieth step-time set, held out (issue 17 part 3; written 2026-12-03, fourteenth session): writes
calibrate/cases/timing20-holdout-input.jsonl. The first timed rows of the heads and families of family sets 13 and
14 (sequence / token classification on decoders and encoders, deberta-v2, bart, mbart, whisper, granitemoe,
granitemoeshared, llama4_text, hunyuan_v1_dense, apertus), whose step time the model has only extrapolated.
Published shapes from models/zoo (full depth where the step fits the H200 with AdamW; Apertus-8B and Llama-4-Scout
cut to a few layers), typical fine-tuning batches. Pre-registered: predicted at the commit that adds it
(data/validation/predictions/timing20-holdout.json), then timed one at a time by calibrate/holdout_timing.sh.
"""
import os

from case_helpers import write_holdout
from make_timing3 import zoo

HERE = os.path.dirname(os.path.abspath(__file__))


def train(cid, model, prec, b, s, ckpt=False, ga=1, **extra):
    c = {"id": cid, "model": model, "mode": "training", "batch_size": b, "seq_len": s, "precision": prec,
         "optimizer": "adamw", "optimizer_impl": "foreach", "grad_checkpointing": ckpt, "grad_accum_steps": ga}
    c.update(extra)
    return c


def with_cfg(model, **cfg):
    m = dict(model)
    m["config"] = dict(model["config"], **cfg)
    return m


def scout_text(**cfg):
    """Llama-4-Scout's text model (the zoo entry is the composite llama4 config) as a llama4_text model."""
    tc = dict(zoo("llama-4-scout-17b-16e")["config"]["text_config"], **cfg)
    tc.pop("model_type", None)
    return {"source": "huggingface", "model_type": "llama4_text", "config": tc, "attn_implementation": "sdpa"}


def cls(cid, model, prec, b, s, task, nl, **kw):
    return train(cid, model, prec, b, s, task=task, num_labels=nl, **kw)


HOLD = [
    cls("ht20-bert-seqcls-ampbf16-b32s256", zoo("bert-base"), "amp_bf16", 32, 256, "seq_cls", 2),
    cls("ht20-robertal-tokcls-bf16-b8s512", zoo("roberta-large"), "bf16", 8, 512, "token_cls", 9),
    cls("ht20-xlmr-seqcls-ampfp16-b16s512", zoo("xlm-roberta-base"), "amp_fp16", 16, 512, "seq_cls", 3),
    cls("ht20-distilbert-seqcls-ampfp16-b64s128", zoo("distilbert-base-uncased"), "amp_fp16", 64, 128, "seq_cls",
        2),
    cls("ht20-debertab-seqcls-ampbf16-b16s512-eager", zoo("deberta-v3-base", "eager"), "amp_bf16", 16, 512,
        "seq_cls", 2),
    cls("ht20-debertal-tokcls-bf16-b4s512-ckpt-eager", zoo("deberta-v3-large", "eager"), "bf16", 4, 512,
        "token_cls", 5, ckpt=True),
    cls("ht20-modernbert-tokcls-ampbf16-b16s1024", zoo("modernbert-base"), "amp_bf16", 16, 1024, "token_cls", 9),
    cls("ht20-l1b-seqcls-bf16-b4s2048", with_cfg(zoo("llama-3.2-1b"), pad_token_id=128004), "bf16", 4, 2048,
        "seq_cls", 2),
    cls("ht20-q25_05-tokcls-ampbf16-b8s1024", with_cfg(zoo("qwen2.5-0.5b"), pad_token_id=151643), "amp_bf16", 8,
        1024, "token_cls", 5),
    cls("ht20-gpt2-seqcls-ampbf16-b16s1024", with_cfg(zoo("gpt2"), pad_token_id=50256), "amp_bf16", 16, 1024,
        "seq_cls", 4),
    cls("ht20-q3_17-seqcls-bf16-b2s2048-ckpt", with_cfg(zoo("qwen3-1.7b"), pad_token_id=151643), "bf16", 2, 2048,
        "seq_cls", 2, ckpt=True),
    train("ht20-bartb-ampfp16-b16s512t128", zoo("bart-base"), "amp_fp16", 16, 512, target_len=128),
    train("ht20-bartl-bf16-b8s1024t256", zoo("bart-large"), "bf16", 8, 1024, target_len=256),
    train("ht20-mbart-ampbf16-b4s1024t256-ckpt", zoo("mbart-large-50"), "amp_bf16", 4, 1024, ckpt=True,
          target_len=256),
    train("ht20-whispers-ampbf16-b16t448", zoo("whisper-small"), "amp_bf16", 16, 3000, target_len=448),
    train("ht20-whisperb-fp32-b16t200", zoo("whisper-base"), "fp32", 16, 3000, target_len=200),
    train("ht20-granite1b-bf16-b4s2048", zoo("granite-3.0-1b-a400m"), "bf16", 4, 2048),
    train("ht20-granite3b-ampfp16-b3s1000-acc2", zoo("granite-3.0-3b-a800m"), "amp_fp16", 3, 1000, ga=2),
    train("ht20-hunyuan18-bf16-b2s2048", zoo("hunyuan-1.8b-instruct"), "bf16", 2, 2048),
    train("ht20-apertus8-8l-bf16-b1s4096", with_cfg(zoo("apertus-8b"), num_hidden_layers=8), "bf16", 1, 4096),
    train("ht20-llama4scout-2l-bf16-b1s4096", scout_text(num_hidden_layers=2), "bf16", 1, 4096),
]

if __name__ == "__main__":
    print(write_holdout(os.path.join(HERE, "timing20-holdout-input.jsonl"), HOLD))
