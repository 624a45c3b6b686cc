#!/usr/bin/env python3
"""Family set 21, speech encoders fed raw waveforms: wav2vec2, hubert, wavlm (harness plugin
calibrate/harness_kinds/speech.py). Training: <Type>ForCTC (labels of target_len ids in 1 .. vocab - 1) or
<Type>ForSequenceClassification (task seq_cls, mean pooling); inference: one forward of the CTC model or of the bare
model (task feature). input_values [B, audio_samples] (16000 a second), no attention mask. Training configs set
layerdrop 0 (a random layer skip would make the step's memory a lottery; fine-tuning scripts pass their own value).
Tuning rows (f21-*) are measured with whole-run allocator recordings before the builders exist; held-out rows
(f22-*) are other shapes and settings, predicted before they are measured.
Usage: python3 audio.py > audio.jsonl   (tuning rows, then held-out rows, one JSON object per line)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from case_helpers import hf  # noqa: E402

# facebook/wav2vec2-base-960h: post-norm encoder, group norm on the first conv, conv without bias
W2V_BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
            "feat_extract_norm": "group", "do_stable_layer_norm": False, "conv_bias": False, "vocab_size": 32,
            "feat_proj_dropout": 0.1}
# facebook/wav2vec2-large-960h-lv60-self and facebook/hubert-large-ls960-ft: pre-norm ("stable") encoder,
# layer norm on every conv, conv with bias
W2V_LARGE = {"hidden_size": 1024, "num_attention_heads": 16, "intermediate_size": 4096, "feat_extract_norm": "layer",
             "do_stable_layer_norm": True, "conv_bias": True, "vocab_size": 32, "feat_proj_dropout": 0.1}
HUB_LARGE = dict(W2V_LARGE)
# microsoft/wavlm-base-plus: post-norm, group norm, gated relative position bias (320 buckets, distance 800)
WLM_BASE_PLUS = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
                 "feat_extract_norm": "group", "do_stable_layer_norm": False, "conv_bias": False, "vocab_size": 32,
                 "num_buckets": 320, "max_bucket_distance": 800, "feat_proj_dropout": 0.1}


def cfg(base, **kw):
    c = dict(base)
    c.update(kw)
    return c


def train(id, mt, config, batch, samples, precision, attn="sdpa", target=None, task=None, labels=None,
          freeze=False, ckpt=False, accum=1, optimizer="adamw", est=4.0):
    c = {"id": id, "model": hf(mt, cfg(config, layerdrop=0.0), attn), "mode": "training", "batch_size": batch,
         "audio_samples": samples, "precision": precision, "optimizer": optimizer, "optimizer_impl": "foreach",
         "grad_checkpointing": ckpt, "grad_accum_steps": accum, "freeze_feature_encoder": freeze, "_est_gib": est}
    if target is not None:
        c["target_len"] = target
    if task is not None:
        c["task"] = task
        c["num_labels"] = labels
    return c


def infer(id, mt, config, batch, samples, precision, attn="sdpa", task=None, est=3.0):
    c = {"id": id, "model": hf(mt, config, attn), "mode": "inference", "batch_size": batch, "audio_samples": samples,
         "precision": precision, "_est_gib": est}
    if task is not None:
        c["task"] = task
    return c


def tuning():
    return [
        # wav2vec2-base CTC fine-tuning as the example scripts run it: feature encoder frozen, 10 s clips, fp32
        train("f21-w2v-base-ctc-fp32-b6-s160000", "wav2vec2", W2V_BASE, 6, 160000, "fp32", target=150, freeze=True,
              est=5.0),
        # wav2vec2-large (lv60, pre-norm, layer-norm convs) 6 of 24 layers, amp bf16, checkpointed, encoder trained
        train("f21-w2v-large6-ctc-ampbf16-ckpt-b3-s199999", "wav2vec2", cfg(W2V_LARGE, num_hidden_layers=6), 3,
              199999, "amp_bf16", target=111, ckpt=True, est=3.0),
        # hubert-large 8 of 24 layers, pure bf16, eager attention, two micro-batches, feature encoder frozen
        train("f21-hub-large8-ctc-bf16-eager-acc2-b5-s123457", "hubert", cfg(HUB_LARGE, num_hidden_layers=8), 5,
              123457, "bf16", attn="eager", target=97, freeze=True, accum=2, est=3.0),
        # wavlm-base-plus CTC, amp fp16 (GradScaler; mean reduction as run_speech_recognition_ctc sets it), eager
        train("f21-wlm-baseplus-ctc-ampfp16-b4-s160000", "wavlm", cfg(WLM_BASE_PLUS, ctc_loss_reduction="mean"), 4,
              160000, "amp_fp16", attn="eager", target=120, freeze=True, est=4.0),
        # wav2vec2-base keyword spotting (1 s clips, 12 classes, mean pooling), amp bf16, feature encoder trained
        train("f21-w2v-base-cls-ampbf16-b32-s16000", "wav2vec2", W2V_BASE, 32, 16000, "amp_bf16", task="seq_cls",
              labels=12, est=4.0),
        # wavlm-base-plus embedding serving: the bare model, bf16, 20 s clips
        infer("f21-wlm-baseplus-feat-inf-bf16-b8-s320000", "wavlm", WLM_BASE_PLUS, 8, 320000, "bf16", attn="eager",
              task="feature", est=3.0),
    ]


def holdout():
    return [
        # hubert-large 4 layers, amp bf16 checkpointed, frozen feature encoder, odd length (amp fp16 left out: the
        # GradScaler skipped the first steps of the amp fp16 tuning row, whose peak then depends on the numerics)
        train("f22-hub-large4-ctc-ampbf16-ckpt-b2-s300001", "hubert", cfg(HUB_LARGE, num_hidden_layers=4,
              ctc_loss_reduction="mean"), 2, 300001, "amp_bf16", target=211, freeze=True, ckpt=True, est=3.0),
        # wavlm-base-plus 6 layers, sequence classification in fp32, two micro-batches, feature encoder trained
        train("f22-wlm-baseplus6-cls-fp32-acc2-b5-s48000", "wavlm", cfg(WLM_BASE_PLUS, num_hidden_layers=6), 5,
              48000, "fp32", attn="eager", task="seq_cls", labels=7, accum=2, est=4.0),
        # wav2vec2-large CTC logits served under amp bf16 (all 24 layers), 15 s clips
        infer("f22-w2v-large-ctc-inf-ampbf16-b6-s240000", "wav2vec2", cfg(W2V_LARGE, num_hidden_layers=24), 6,
              240000, "amp_bf16", est=3.0),
    ]


if __name__ == "__main__":
    for c in tuning() + holdout():
        print(json.dumps(c))
