#!/usr/bin/env python3
"""memplan validation harness: measure PyTorch GPU memory for the cases of a JSONL file.

Each case runs in a fresh process (forked from a parent that has imported torch/transformers/torchvision but
never touched CUDA, or a fresh interpreter with --launcher subprocess) exactly as
data/validation/CASE-FORMAT.md describes, and is written back with a `measured` object.

    python3 calibrate/harness.py CASES.jsonl --out OUT.jsonl [--env ENV.json] [--only ID] [--timeout 180]
                                 [--jobs 4] [--mem-budget-gib 110]
    python3 calibrate/harness.py --compare REF.jsonl OUT.jsonl      # deviation of OUT against measured REF

Input lines may carry a `measured` object already (e.g. the public file): it is ignored when measuring, replaced in
the output, and used by the end-of-run summary as the reference.  Keys starting with `_` are scheduling hints
(`_est_gib`: expected peak reserved GiB) and are dropped from the output.
"""
import argparse
import datetime
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import harness_kinds  # per-family plugins (calibrate/harness_kinds/): inputs that are not token ids / images

# torch.cuda.is_available() in the parent must not initialise the driver before we fork
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")

MIB = float(1 << 20)
OOM_MESSAGE_CHARS = 400
STEPS = 3
PHASE_KEYS = ["start_mib", "batch_mib", "fwd_peak_mib", "after_fwd_mib", "bwd_peak_mib", "micro_rest_peak_mib",
              "after_bwd_mib", "opt_peak_mib", "end_mib", "step_peak_mib"]
HF_TYPES = ("gpt2", "llama", "mistral", "qwen2", "mixtral", "bert", "gemma2", "qwen3", "qwen3_moe", "gemma",
            "gemma3_text", "phi3", "gpt_neox", "olmo2", "deepseek_v2", "deepseek_v3", "gpt_oss", "starcoder2", "t5",
            "granite", "phi", "stablelm", "cohere", "qwen2_moe", "opt", "roberta", "xlm-roberta", "gptj", "falcon",
            "smollm3", "distilbert", "gpt_bigcode", "olmoe", "bloom", "glm4", "nemotron", "olmo",
            "modernbert", "deberta-v2", "ernie4_5", "exaone4", "seed_oss", "arcee", "granitemoe", "bart", "mbart",
            "whisper", "llama4_text", "granitemoeshared", "hunyuan_v1_dense", "apertus", "marian", "pegasus",
            "m2m_100", "mt5", "umt5", "camembert", "electra", "cohere2", "glm4_moe", "gpt_neo", "vit", "olmo3",
            "ernie4_5_moe", "phimoe", "albert", "mpnet", "dinov2", "deit", "lfm2",
            # family set 19 (2026-12-03, sixteenth session)
            "gemma4_text", "gemma4", "qwen3_next", "qwen3_5_text", "qwen3_5", "qwen3_5_moe_text", "qwen3_5_moe",
            "mistral4", "ministral3", "minimax_m2", "lfm2_moe",
            # family set 32 (2026-12-05, twenty-sixth session)
            "esm",
            # family set 46 (2026-12-05, thirty-first session)
            "ernie",
            # family set 47 (2026-12-06, thirty-second session)
            "biogpt",
            # family set 48 (2026-12-06, thirty-second session)
            "xlm-roberta-xl", "data2vec-text", "mpt",
            # family set 50 (2026-12-06): CodeGenForCausalLM, eager only (attn_implementation
            # "eager" in every row: from_config refuses "sdpa", the class has no SDPA path)
            "codegen",
            # family set 56 (2026-12-06, thirty-fourth session): Glm4MoeLiteForCausalLM (GLM-4.7-Flash)
            "glm4_moe_lite",
            # family set 57 (2026-12-06, thirty-fourth session): AfmoeForCausalLM (Arcee Trinity)
            "afmoe",
            # family sets 54 / 55 (2026-12-06, thirty-fourth session): NanoChat, VaultGemma ForCausalLM
            "nanochat", "vaultgemma",
            # family set 58 (2026-12-06): DeepseekV32ForCausalLM (MLA + the DSA lightning indexer), sdpa and eager
            "deepseek_v32",
            # family set 59 (2026-12-06): T5GemmaForConditionalGeneration (encoder / decoder sub-configs)
            "t5gemma",
            # family sets 60 / 61 (2026-12-06, thirty-fifth session): Cohere2MoeForCausalLM (Command A+), and
            # MinistralForCausalLM (Ministral-8B: Qwen2's layers, both masks always); sdpa and eager rows
            "cohere2_moe", "ministral",
            # family set 66 (2026-12-06): DeepseekV4ForCausalLM, eager only (from_config refuses "sdpa"),
            # sliding_attention layers only (layer_types given in every row)
            "deepseek_v4",
            # family sets 62 / 63 (2026-12-06, thirty-fifth session): GraniteSWAForCausalLM and
            # GraniteMoeSWAForCausalLM (sliding windows + per-head sinks), eager only (attn_implementation "eager" in
            # every row: _supports_sdpa is False, from_config refuses "sdpa")
            "granite_swa", "granitemoe_swa",
            # family set 64 (2026-12-06, thirty-fifth session): GlmMoeDsaForCausalLM (GLM-5: DeepSeek-V3.2's DSA
            # with cross-layer top-k sharing), sdpa and eager
            "glm_moe_dsa",
            # family set 65 (2026-12-06, thirty-fifth session): SolarOpenForCausalLM (LlamaAttention + Glm4MoeMoE)
            "solar_open",
            # family set 67 (2026-12-06, thirty-sixth session): MiniCPM3ForCausalLM (MLA + MiniCPM's scalings),
            # sdpa and eager
            "minicpm3",
            # family set 68 (2026-12-06, thirty-sixth session): LongcatFlashForCausalLM (two MLA sublayers, dense
            # MLPs and a shortcut MoE with identity experts, its experts' Python loop), sdpa and eager
            "longcat_flash",
            # family sets 73 .. 75 (2026-12-06, thirty-sixth session): CwmForCausalLM (Code World Model: Llama's
            # layers, both masks always), Jais2ForCausalLM (LayerNorm + relu2 MLP, biases) and HyperCLOVAXForCausalLM
            # (Granite's muP multipliers + peri-LN); sdpa and eager rows
            "cwm", "jais2", "hyperclovax",
            # family sets 72 / 71 (2026-12-06, thirty-sixth session): ExaoneMoeForCausalLM (K-EXAONE: Exaone4
            # attention + DeepseekV3MoE) and HYV3ForCausalLM (Hy3: qk-normed heads + sigmoid top-k MoE), sdpa and eager
            "exaone_moe", "hy_v3",
            # family set 69 (2026-12-06, thirty-sixth session): MiMoV2FlashForCausalLM (full / sliding layers, sinks on
            # the sliding ones, DeepSeek-V3's router without shared experts), eager only (attn_implementation "eager"
            # in every row: _supports_sdpa is False, from_config refuses "sdpa")
            "mimo_v2_flash",
            # family set 70 (2026-12-06, thirty-sixth session): LagunaForCausalLM (per-layer heads, softplus output
            # gates, sigmoid router with a shared expert), sdpa and eager
            "laguna")
MASKED_LM_TYPES = ("bert", "roberta", "xlm-roberta", "distilbert", "modernbert", "deberta-v2", "camembert",
                   "electra", "albert", "mpnet", "esm", "ernie", "xlm-roberta-xl", "data2vec-text")
SEQ2SEQ_TYPES = ("t5", "bart", "mbart", "marian", "pegasus", "m2m_100", "mt5",
                 "umt5", "t5gemma")  # AutoModelForSeq2SeqLM, token ids in, labels of target_len
IMAGE_CLS_TYPES = ("vit", "dinov2", "deit")  # AutoModelForImageClassification: pixel_values [B, 3, image_size, image_size] in
SPEECH_TYPES = ("whisper",)  # AutoModelForSpeechSeq2Seq: input_features [B, num_mel_bins, seq_len] in, labels out
TASKS = ("seq_cls", "token_cls")  # case["task"]: AutoModelFor{Sequence,Token}Classification, case["num_labels"]
FEATURE_TASK = "feature"  # case["task"] "feature" (inference only): AutoModel, the bare encoder (embedding serving)
FORWARD_REPEATS = 3  # timed forwards after the measured one (inference of encoders / vision models)
FORWARD_KINDS = ("masked_lm", "seq_cls", "token_cls", "feature", "image_cls", "vision")  # inference: one forward
FORWARD_KINDS = FORWARD_KINDS + harness_kinds.FORWARD_KINDS  # and the plugins' forward kinds
TV_NAMES = ("resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "vit_b_16", "vit_b_32", "vit_l_16",
            "resnext50_32x4d", "resnext101_32x8d", "wide_resnet50_2", "wide_resnet101_2", "convnext_tiny",
            "convnext_small", "convnext_base", "convnext_large", "efficientnet_b0", "efficientnet_b1",
            "efficientnet_b2", "efficientnet_b3", "efficientnet_b4", "efficientnet_b5", "efficientnet_b6",
            "efficientnet_b7", "efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l", "mobilenet_v2",
            "mobilenet_v3_small", "mobilenet_v3_large", "swin_t", "swin_s", "swin_b", "swin_v2_t", "swin_v2_s",
            "swin_v2_b", "densenet121", "densenet169", "vgg16", "vgg16_bn", "regnet_y_400mf", "regnet_x_400mf",
            "regnet_y_1_6gf", "regnet_y_8gf", "resnext101_64x4d", "densenet161", "densenet201", "vgg11", "vgg11_bn",
            "vgg13", "vgg13_bn", "vgg19", "vgg19_bn", "regnet_y_800mf", "regnet_y_3_2gf", "regnet_y_16gf",
            "regnet_y_32gf", "regnet_x_800mf", "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_x_8gf", "regnet_x_16gf",
            "regnet_x_32gf")
SDPA_NAMES = {-1: "error", 0: "math", 1: "flash", 2: "efficient", 3: "cudnn", 4: "overrideable"}


def mib(nbytes):
    return round(nbytes / MIB, 1)


# ----------------------------------------------------------------------------------------------------------------
# child side: everything below `measure_case` runs in the per-case process
# ----------------------------------------------------------------------------------------------------------------

class _SdpaSpy:
    """Wraps F.scaled_dot_product_attention to record which fused backend PyTorch picks (no allocation)."""

    def __init__(self):
        import torch
        import torch.nn.functional as F
        self.torch = torch
        self.F = F
        self.orig = F.scaled_dot_product_attention
        self.seen = {}
        self.active = False  # switched on only for the probe forward after all measurements (casts allocate)

        def wrapper(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kw):
            if self.active:
                try:
                    q, k, v, am = query, key, value, attn_mask
                    if torch.is_autocast_enabled("cuda"):  # SDPA is autocast to the low-precision dtype
                        adt = torch.get_autocast_dtype("cuda")
                        q, k, v = (t.to(adt) if t.is_floating_point() else t for t in (q, k, v))
                        if am is not None and am.is_floating_point():
                            am = am.to(adt)
                    choice = int(torch._fused_sdp_choice(q, k, v, am, dropout_p, is_causal, scale=scale,
                                                         enable_gqa=bool(kw.get("enable_gqa", False))))
                    name = SDPA_NAMES.get(choice, str(choice))
                    dt = str(q.dtype).replace("torch.", "")
                except Exception as e:  # noqa: BLE001 - observation only
                    name, dt = "unknown(%s)" % type(e).__name__, "?"
                tag = "%s %s hd%d mask=%s causal=%s drop=%s gqa=%s" % (
                    name, dt, query.shape[-1], attn_mask is not None,
                    bool(is_causal), dropout_p > 0, bool(kw.get("enable_gqa", False)))
                self.seen[tag] = self.seen.get(tag, 0) + 1
            return self.orig(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                             scale=scale, **kw)

        F.scaled_dot_product_attention = wrapper

    def result(self):
        return sorted(self.seen)


def _dtype_of(precision):
    import torch
    return {"fp32": torch.float32, "amp_bf16": torch.float32, "amp_fp16": torch.float32,
            "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


def _autocast_dtype(precision):
    import torch
    return {"amp_bf16": torch.bfloat16, "amp_fp16": torch.float16}.get(precision)


def _decoder_layers(model):
    import torch.nn as nn
    base = getattr(model, "base_model", model)
    enc, dec = getattr(base, "encoder", None), getattr(base, "decoder", None)
    if isinstance(getattr(enc, "block", None), nn.ModuleList) and isinstance(getattr(dec, "block", None), nn.ModuleList):
        return nn.ModuleList(list(enc.block) + list(dec.block))  # T5: encoder blocks, then decoder blocks
    for path in ("layers", "h", "encoder.layer", "transformer.layer", "decoder.layers", "model.layers", "gpt_neox.layers"):
        obj = base
        for a in path.split("."):
            obj = getattr(obj, a, None)
            if obj is None:
                break
        if isinstance(obj, nn.ModuleList):
            return obj
    raise ValueError("cannot find the decoder layers of %s" % type(model).__name__)


def token_limit(config):
    """The ids a batch draws lie below this: the vocabulary, or a smaller per-layer-input vocabulary (Gemma 3n's text
    model indexes embed_tokens_per_layer, vocab_size_per_layer_input rows, with the raw ids: the ids above it are
    the multimodal model's, which masks them first)."""
    v = int(config.vocab_size)
    per_layer = getattr(config, "vocab_size_per_layer_input", None)
    return min(v, int(per_layer)) if per_layer else v


def build_model(case, device="cuda"):
    """Builds the model on `device` (the GPU for every measured case) with random weights. Returns (model, kind) with
    kind 'causal_lm'|'masked_lm'|'seq2seq'|'speech_seq2seq'|'seq_cls'|'token_cls'|'image_cls'|'vision'."""
    import torch
    m = case["model"]
    dtype = _dtype_of(case["precision"])
    if dtype != torch.float32:
        torch.set_default_dtype(dtype)
    with torch.device(device):
        if m["source"] == "huggingface":
            import transformers
            mt = m["model_type"]
            plugin = harness_kinds.for_type(mt)
            if mt not in HF_TYPES and plugin is None:
                raise ValueError("unsupported model_type %r" % mt)
            # A config carrying its own model_type (as a saved config.json does) names it once: for_model's argument.
            cfg = transformers.AutoConfig.for_model(mt, **{k: v for k, v in m.get("config", {}).items() if k != "model_type"})
            if case["mode"] == "training":
                cfg.use_cache = False
            attn = m.get("attn_implementation", "sdpa")
            task = case.get("task")
            if plugin is not None:  # its own inputs and heads (harness_kinds/)
                model, kind = plugin.build(case, cfg, attn, sys.modules[__name__])
            elif task == FEATURE_TASK:
                if case["mode"] != "inference":
                    raise ValueError("task feature is inference only")
                model = transformers.AutoModel.from_config(cfg, attn_implementation=attn)
                kind = "feature"
            elif task is not None:
                if task not in TASKS:
                    raise ValueError("unknown task %r" % task)
                cfg.num_labels = int(case.get("num_labels", 2))
                auto = (transformers.AutoModelForSequenceClassification if task == "seq_cls"
                        else transformers.AutoModelForTokenClassification)
                model = auto.from_config(cfg, attn_implementation=attn)
                kind = task
            elif mt in IMAGE_CLS_TYPES:
                model = transformers.AutoModelForImageClassification.from_config(cfg, attn_implementation=attn)
                kind = "image_cls"
            elif mt in SPEECH_TYPES:
                model = transformers.AutoModelForSpeechSeq2Seq.from_config(cfg, attn_implementation=attn)
                kind = "speech_seq2seq"
            elif mt in MASKED_LM_TYPES:
                model = transformers.AutoModelForMaskedLM.from_config(cfg, attn_implementation=attn)
                kind = "masked_lm"
            elif mt in SEQ2SEQ_TYPES:
                model = transformers.AutoModelForSeq2SeqLM.from_config(cfg, attn_implementation=attn)
                kind = "seq2seq"
            else:
                try:
                    model = transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=attn)
                except ValueError:  # a type the auto class does not map (mistral4 in 5.17): its own causal LM class
                    cls = getattr(transformers, type(cfg).__name__.replace("Config", "ForCausalLM"), None)
                    if cls is None:
                        raise
                    model = cls._from_config(cfg, attn_implementation=attn)
                kind = "causal_lm"
        elif m["source"] == "torchvision":
            import torchvision
            name = m["name"]
            if name not in TV_NAMES:
                raise ValueError("unsupported torchvision model %r" % name)
            kw = {"weights": None, "num_classes": int(case.get("num_classes", 1000))}
            if name.startswith("vit") and int(case.get("image_size", 224)) != 224:
                kw["image_size"] = int(case["image_size"])
            model = getattr(torchvision.models, name)(**kw)
            kind = "vision"
        else:
            raise ValueError("unknown model source %r" % m["source"])
    return model, kind


def apply_lora(model, case):
    """peft LoRA (case["lora"]: r, alpha, dropout, target_modules, modules_to_save), after the training options
    (gradient checkpointing is enabled on the base model first, as fine-tuning scripts do). A case with a task head
    passes task_type SEQ_CLS / TOKEN_CLS, as classification fine-tuning scripts do: peft then trains the head
    ("classifier" / "score") as a modules_to_save copy (engine/lora.h task_modules_to_save)."""
    import peft
    lc = case["lora"]
    targets = lc.get("target_modules", "all-linear")
    task_type = {"seq_cls": "SEQ_CLS", "token_cls": "TOKEN_CLS"}.get(case.get("task"))
    conf = peft.LoraConfig(r=int(lc.get("r", 8)), lora_alpha=int(lc.get("alpha", 8)),
                           lora_dropout=float(lc.get("dropout", 0.0)), target_modules=targets, bias="none",
                           modules_to_save=lc.get("modules_to_save"), task_type=task_type)
    with __import__("torch").device("cuda"):
        return peft.get_peft_model(model, conf)


def apply_training_options(model, kind, case):
    """grad checkpointing (all or a subset of decoder layers) and freezing. Returns a description dict."""
    info = {}
    layers_ckpt = case.get("grad_checkpointing_layers")
    frozen = case.get("frozen_layers") or []
    if kind == "vision":
        if case.get("grad_checkpointing") or layers_ckpt or frozen or case.get("freeze_embeddings"):
            raise ValueError("grad checkpointing / freezing options are not supported for torchvision models")
        return info
    if case.get("grad_checkpointing") or layers_ckpt is not None:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if layers_ckpt is not None:
            keep = set(int(i) for i in layers_ckpt)
            layers = _decoder_layers(model)
            bad = [i for i in keep if i < 0 or i >= len(layers)]
            if bad:
                raise ValueError("grad_checkpointing_layers out of range: %s" % bad)
            for i, layer in enumerate(layers):
                if not hasattr(layer, "gradient_checkpointing"):
                    raise ValueError("layer %d (%s) has no gradient_checkpointing flag" % (i, type(layer).__name__))
                if i not in keep:
                    layer.gradient_checkpointing = False
        try:
            info["ckpt_layers_on"] = [i for i, l in enumerate(_decoder_layers(model))
                                      if getattr(l, "gradient_checkpointing", False)]
        except ValueError:  # a composite model (VLM, CLIP): its towers' layers, counted by module name
            info["ckpt_modules_on"] = sorted({type(m).__name__ for m in model.modules()
                                              if getattr(m, "gradient_checkpointing", False) is True})
    if frozen:
        layers = _decoder_layers(model)
        for i in frozen:
            for p in layers[int(i)].parameters():
                p.requires_grad_(False)
    if case.get("freeze_embeddings"):
        for p in model.get_input_embeddings().parameters():
            p.requires_grad_(False)
    return info


def make_optimizer(params, case):
    import torch
    name = case.get("optimizer", "adamw")
    impl = case.get("optimizer_impl", "default") or "default"
    kw = {}
    if impl == "foreach":
        kw["foreach"] = True
    elif impl == "fused":
        kw["fused"] = True
    elif impl == "forloop":
        kw["foreach"] = False
    elif impl != "default":
        raise ValueError("unknown optimizer_impl %r" % impl)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, **kw)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4, **kw)
    if name == "sgd_momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, **kw)
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3, **kw)
    if name == "adafactor":
        if impl not in ("default", "forloop"):
            raise ValueError("adafactor has no %s implementation" % impl)
        from transformers.optimization import Adafactor
        return Adafactor(params, lr=1e-4, relative_step=False, scale_parameter=False)
    raise ValueError("unknown optimizer %r" % name)


# torch.cuda.reset_peak_memory_stats() resets the reserved peak too. Uncapped, reserved never shrinks, so the
# last window's peak is the run's; under a cap the allocator releases cached segments to retry, and the last
# window's peak can be far below the run's (a ResNet-50 capped run: 1974 MiB in the last window, 6932 over the
# run). So every reset first folds the window's reserved peak into the run's.
_RUN_RESERVED_PEAK = [0]


def _reset_peaks():
    import torch
    _RUN_RESERVED_PEAK[0] = max(_RUN_RESERVED_PEAK[0], torch.cuda.max_memory_reserved())
    torch.cuda.reset_peak_memory_stats()


def _run_reserved_peak_mib():
    import torch
    return mib(max(_RUN_RESERVED_PEAK[0], torch.cuda.max_memory_reserved()))


def _oom_record(e, measured):
    measured["oom"] = True
    measured["oom_message"] = str(e)[:OOM_MESSAGE_CHARS]
    measured["peak_reserved_mib"] = _run_reserved_peak_mib()
    return str(e)


def measure_case(case):
    """Runs one case in this (fresh) process and returns the output dict fields {measured, observed}."""
    import torch
    import torch.nn.functional as F

    torch.cuda.init()
    dev = torch.cuda.current_device()
    total = torch.cuda.get_device_properties(dev).total_memory
    cap = case.get("memory_cap_gib")
    if cap is not None:
        torch.cuda.set_per_process_memory_fraction(min(1.0, float(cap) * (1 << 30) / total), dev)
    spy = _SdpaSpy()
    measured = {}
    observed = {}
    torch.manual_seed(0)
    try:
        to_device = case.get("load", "to_device") == "to_device"  # CASE-FORMAT.md: the default since 2026-12-01
        model, kind = build_model(case, device="cpu" if to_device else "cuda")
        if to_device:  # built on the CPU in the case's dtype, then moved (Module._apply order)
            model = model.to("cuda")
        if case["mode"] == "training":
            model.train()
            observed.update(apply_training_options(model, kind, case))
            if case.get("lora"):
                model = apply_lora(model, case)
                model.train()
        elif case["mode"] == "inference":
            model.eval()
        else:
            raise ValueError("unknown mode %r" % case["mode"])
        torch.cuda.synchronize()
        measured["params"] = sum(p.numel() for p in model.parameters())
        measured["weights_mib"] = mib(torch.cuda.memory_allocated())
        measured["oom"] = False
        if case["mode"] == "training":
            _train(case, model, kind, measured, observed, spy)
        else:
            _infer(case, model, kind, measured, observed, spy)
        measured["peak_reserved_mib"] = _run_reserved_peak_mib()
        _alloc_counters(observed)
        try:  # after all measurements: one more forward to see which SDPA backends the real calls pick
            spy.active = True
            _probe_forward(case, model, kind)
        except Exception as e:  # noqa: BLE001
            observed["sdpa_probe_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        spy.active = False
    except torch.OutOfMemoryError as e:
        observed["oom_message_full"] = _oom_record(e, measured)
        observed["oom_where"] = "".join(traceback.format_exception(e)[-3:])[-1500:]
    if "num_alloc_retries" not in observed:
        _alloc_counters(observed)
    observed["sdpa"] = spy.result()
    return {"measured": measured, "observed": observed}


def _alloc_counters(observed):
    import torch
    st = torch.cuda.memory_stats()
    observed["num_alloc_retries"] = int(st.get("num_alloc_retries", 0))
    observed["num_ooms"] = int(st.get("num_ooms", 0))


def _probe_forward(case, model, kind):
    """One forward like the measured ones (same grad/autocast mode), results discarded."""
    import contextlib
    import torch
    import torch.nn.functional as F
    ac_dtype = _autocast_dtype(case["precision"])
    ac = torch.autocast("cuda", dtype=ac_dtype) if ac_dtype is not None else contextlib.nullcontext()
    B = int(case["batch_size"])
    plugin = harness_kinds.for_kind(kind)
    if plugin is not None and hasattr(plugin, "probe"):
        return plugin.probe(case, model, kind, sys.modules[__name__])
    if plugin is not None and case["mode"] == "training":
        make_batch, fwd_loss = plugin.train_batch_fns(case, model, kind, sys.modules[__name__])
        x, y = make_batch()
        with ac:
            fwd_loss(x, y)
        return
    if case["mode"] == "inference" and kind in FORWARD_KINDS:
        with torch.inference_mode(), ac:
            _call_forward(model, kind, _forward_input(case, model, kind))
        return
    if kind == "vision":
        S = int(case.get("image_size", 224))
        x = torch.randn(B, 3, S, S, device="cuda", dtype=_dtype_of(case["precision"]))
        with ac:
            F.cross_entropy(model(x), torch.zeros(B, dtype=torch.long, device="cuda"))
        return
    if kind == "image_cls":
        S = int(model.config.image_size)
        x = torch.randn(B, 3, S, S, device="cuda", dtype=_dtype_of(case["precision"]))
        with ac:
            model(pixel_values=x, labels=torch.zeros(B, dtype=torch.long, device="cuda"))
        return
    if kind == "speech_seq2seq":
        feats = torch.randn(B, int(model.config.num_mel_bins), int(case["seq_len"]), device="cuda",
                            dtype=_dtype_of(case["precision"]))
        lab = torch.randint(0, int(model.config.vocab_size), (B, int(case.get("target_len") or 448)), device="cuda")
        with ac:
            model(input_features=feats, labels=lab)
        return
    ids = torch.randint(0, token_limit(model.config), (B, int(case["seq_len"])), device="cuda")
    if case["mode"] == "training":
        lab = ids
        if kind in TASKS:
            nl = int(model.config.num_labels)
            lab = torch.randint(0, nl, (B,) if kind == "seq_cls" else (B, ids.shape[1]), device="cuda")
        if kind == "seq2seq":
            lab = torch.randint(0, int(model.config.vocab_size), (B, int(case.get("target_len") or ids.shape[1])),
                                device="cuda")
        with ac:
            model(input_ids=ids, labels=lab)
    else:
        with torch.inference_mode(), ac:
            model(input_ids=ids, use_cache=True, logits_to_keep=1)


def train_batch_fns(case, model, kind):
    """(make_batch, fwd_loss) of one training micro-batch as every measuring script draws it: make_batch() -> (x, y)
    on the GPU (token ids, or images / log-mel features in the model's dtype: fp32 under amp; labels by kind),
    fwd_loss(x, y) -> the loss / grad_accum_steps (called inside autocast by the caller)."""
    import torch
    import torch.nn.functional as F
    plugin = harness_kinds.for_kind(kind)
    if plugin is not None:
        return plugin.train_batch_fns(case, model, kind, sys.modules[__name__])
    B = int(case["batch_size"])
    G = int(case.get("grad_accum_steps", 1) or 1)
    mdtype = _dtype_of(case["precision"])
    if kind == "vision":
        S = int(case.get("image_size", 224))
        ncls = int(case.get("num_classes", 1000))
    elif kind == "image_cls":  # transformers image classifiers: the config's image size and label count
        S = int(model.config.image_size)
        ncls = int(model.config.num_labels)
    else:
        L = int(case["seq_len"])
        V = int(model.config.vocab_size)
        T = int(case.get("target_len") or L)

    def make_batch():
        if kind in ("vision", "image_cls"):
            x = torch.randn(B, 3, S, S, device="cuda", dtype=mdtype)
            y = torch.randint(0, ncls, (B,), device="cuda")
            return x, y
        if kind == "speech_seq2seq":  # log-mel features in the model's dtype (fp32 under amp), then the labels
            x = torch.randn(B, int(model.config.num_mel_bins), L, device="cuda", dtype=mdtype)
            return x, torch.randint(0, V, (B, T), device="cuda")
        ids = torch.randint(0, token_limit(model.config), (B, L), device="cuda")
        if kind == "seq2seq":
            return ids, torch.randint(0, V, (B, T), device="cuda")
        if kind == "seq_cls":
            return ids, torch.randint(0, int(model.config.num_labels), (B,), device="cuda")
        if kind == "token_cls":
            return ids, torch.randint(0, int(model.config.num_labels), (B, L), device="cuda")
        return ids, ids

    def fwd_loss(x, y):
        if kind == "vision":
            return F.cross_entropy(model(x), y) / G
        if kind == "image_cls":
            return model(pixel_values=x, labels=y).loss / G
        if kind == "speech_seq2seq":
            return model(input_features=x, labels=y).loss / G
        return model(input_ids=x, labels=y).loss / G

    return make_batch, fwd_loss


def _train(case, model, kind, measured, observed, spy):
    import torch
    alloc = torch.cuda.memory_allocated
    peak = torch.cuda.max_memory_allocated
    reset = _reset_peaks
    sync = torch.cuda.synchronize

    G = int(case.get("grad_accum_steps", 1) or 1)
    precision = case["precision"]
    ac_dtype = _autocast_dtype(precision)
    params = [p for p in model.parameters() if p.requires_grad]
    observed["trainable_params"] = sum(p.numel() for p in params)
    opt = make_optimizer(params, case)
    scaler = torch.amp.GradScaler("cuda") if precision == "amp_fp16" else None
    make_batch, fwd_loss = train_batch_fns(case, model, kind)

    steps, times, skipped = [], [], []
    # GradScaler skips optimizer.step() when the scaled gradients overflowed and then lowers its scale; read after the
    # step's closing sync so the timing is not disturbed (measured.scaler_skipped_steps, CASE-FORMAT.md).
    scale = scaler.get_scale() if scaler is not None else None
    for step in range(STEPS):
        sync()
        t0 = time.perf_counter()
        s = {"start_mib": mib(alloc())}
        reset()
        micro_peak = 0  # everything inside the micro-batch loop (for step_peak)
        rest_peak = 0  # first micro-batch's backward + all later micro-batches (CASE-FORMAT micro_rest_peak_mib)
        batch_peak = 0
        for micro in range(G):
            x, y = make_batch()
            if micro == 0:
                s["batch_mib"] = mib(alloc())
            bt = peak()
            batch_peak = max(batch_peak, bt)
            reset()
            if ac_dtype is not None:
                with torch.autocast("cuda", dtype=ac_dtype):
                    loss = fwd_loss(x, y)
            else:
                loss = fwd_loss(x, y)
            fp, af = peak(), alloc()
            reset()
            if scaler is not None:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            bp = peak()
            del loss, x, y
            if micro == 0:
                s["fwd_peak_mib"] = mib(fp)
                s["after_fwd_mib"] = mib(af)
                s["bwd_peak_mib"] = mib(bp)
            micro_peak = max(micro_peak, fp, bp)
            rest_peak = max(rest_peak, bp) if micro == 0 else max(rest_peak, bt, fp, bp)
            reset()
        s["micro_rest_peak_mib"] = mib(rest_peak)
        s["after_bwd_mib"] = mib(alloc())
        reset()
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        op = peak()
        s["opt_peak_mib"] = mib(op)
        opt.zero_grad(set_to_none=True)
        s["end_mib"] = mib(alloc())
        s["step_peak_mib"] = mib(max(batch_peak, micro_peak, op))
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
        steps.append({k: s[k] for k in PHASE_KEYS})
        if scaler is not None:
            after = scaler.get_scale()
            if after < scale:
                skipped.append(step + 1)
            scale = after
    measured["peak_allocated_mib"] = max(st["step_peak_mib"] for st in steps)
    measured["steps"] = steps
    if scaler is not None:
        measured["scaler_skipped_steps"] = skipped
    measured["step_time_ms"] = round(statistics.median(times[1:]), 2)
    observed["step_times_ms"] = [round(t, 2) for t in times]


def _infer(case, model, kind, measured, observed, spy):
    import torch
    if kind in ("seq2seq", "speech_seq2seq"):
        return _infer_seq2seq(case, model, measured, observed)
    plugin = harness_kinds.for_kind(kind)
    if plugin is not None and kind not in FORWARD_KINDS:
        if not hasattr(plugin, "infer"):
            raise ValueError("kind %r has no inference in its harness plugin" % kind)
        return plugin.infer(case, model, kind, measured, observed, sys.modules[__name__])
    if kind in FORWARD_KINDS:
        return _infer_forward(case, model, kind, measured, observed)
    if kind != "causal_lm":
        raise ValueError("inference cases need a causal LM or a seq2seq LM")
    return _infer_causal(case, model, measured, observed)


def _infer_causal(case, model, measured, observed, ids=None, cache_of=None, extra=None):
    """A causal LM's inference (CASE-FORMAT.md): the prefill of `ids` (default: random token ids [B, seq_len] below
    config.vocab_size) with use_cache=True and logits_to_keep=1, its KV cache (`cache_of(out)`, default
    out.past_key_values) measured and freed, and greedy generate() of generate_tokens, in generate_first order.
    `extra`: more keyword inputs of the prompt (a VLM's pixel_values, image_grid_thw ...), given to the prefill's
    forward and to generate() alike. Harness plugins whose models are causal LMs with other inputs or cache fields
    call it (harness_kinds/)."""
    import torch
    alloc = torch.cuda.memory_allocated
    peak = torch.cuda.max_memory_allocated
    reset = _reset_peaks
    sync = torch.cuda.synchronize
    B, L = int(case["batch_size"]), int(case["seq_len"])
    N = int(case.get("generate_tokens") or 0)
    ac_dtype = _autocast_dtype(case["precision"])
    import contextlib
    ctx = (lambda: torch.autocast("cuda", dtype=ac_dtype)) if ac_dtype is not None else contextlib.nullcontext
    if ids is None:
        ids = torch.randint(0, token_limit(model.config), (B, L), device="cuda")
    if cache_of is None:
        cache_of = lambda out: out.past_key_values  # noqa: E731
    extra = extra or {}
    res = {}

    def prefill():
        sync()
        before = alloc()
        reset()
        t0 = time.perf_counter()
        with torch.inference_mode(), ctx():
            out = model(input_ids=ids, use_cache=True, logits_to_keep=1, **extra)
            sync()
            observed["prefill_time_ms"] = round((time.perf_counter() - t0) * 1e3, 2)
            res["pp"] = peak()
            cache = cache_of(out)
            del out
            measured["prefill_peak_mib"] = mib(res["pp"])
            measured["kv_cache_mib"] = mib(alloc() - before)
            del cache

    def generate():
        reset()
        t0 = time.perf_counter()
        with torch.inference_mode(), ctx():
            gen = model.generate(ids, max_new_tokens=N, min_new_tokens=N, do_sample=False, **extra)
        sync()
        observed["generate_time_ms"] = round((time.perf_counter() - t0) * 1e3, 2)
        res["gp"] = peak()
        observed["generated_shape"] = list(gen.shape)
        del gen

    # generate_first: what a serving script does, generate() on a fresh process, then the prefill measurement
    # (CASE-FORMAT.md); the peak reserved differs because generate() meets an empty cache instead of the prefill's.
    order = [generate, prefill] if case.get("generate_first", True) and N > 0 else [prefill] + ([generate] if N > 0 else [])
    for f in order:
        f()
    pp, gp = res["pp"], res.get("gp")
    measured["peak_allocated_mib"] = mib(max(pp, gp or 0))
    measured["generate_peak_mib"] = mib(gp) if gp is not None else None


def _forward_input(case, model, kind):
    """The one input of an encoder / vision inference forward: token ids [B, seq_len], or images [B, 3, S, S] in the
    model's dtype (torchvision: case image_size, default 224; transformers: the config's image_size)."""
    import torch
    plugin = harness_kinds.for_kind(kind)
    if plugin is not None:
        return plugin.forward_input(case, model, kind, sys.modules[__name__])
    B = int(case["batch_size"])
    if kind in ("vision", "image_cls"):
        S = int(case.get("image_size", 224)) if kind == "vision" else int(model.config.image_size)
        return torch.randn(B, 3, S, S, device="cuda", dtype=_dtype_of(case["precision"]))
    return torch.randint(0, int(model.config.vocab_size), (B, int(case["seq_len"])), device="cuda")


def _call_forward(model, kind, x):
    plugin = harness_kinds.for_kind(kind)
    if plugin is not None:
        return plugin.call_forward(model, kind, x, sys.modules[__name__])
    if kind == "vision":
        return model(x)
    if kind == "image_cls":
        return model(pixel_values=x)
    return model(input_ids=x)


def _infer_forward(case, model, kind, measured, observed):
    """Encoder / vision inference (CASE-FORMAT.md): model.eval(), torch.inference_mode() (and autocast under amp), one
    forward of the batch (token ids without an attention mask, or images); the output is dropped after the peak is
    read. peak_allocated_mib = prefill_peak_mib = that forward's peak. Then FORWARD_REPEATS more
    forwards, each synchronised and timed (observed.forward_times_ms; their median is measured.forward_time_ms),
    as a serving loop runs them: the reserved peak covers them too."""
    import contextlib
    import torch
    sync = torch.cuda.synchronize
    ac_dtype = _autocast_dtype(case["precision"])
    ctx = (lambda: torch.autocast("cuda", dtype=ac_dtype)) if ac_dtype is not None else contextlib.nullcontext
    x = _forward_input(case, model, kind)
    sync()
    _reset_peaks()
    t0 = time.perf_counter()
    with torch.inference_mode(), ctx():
        out = _call_forward(model, kind, x)
        sync()
        observed["prefill_time_ms"] = round((time.perf_counter() - t0) * 1e3, 2)
        pp = torch.cuda.max_memory_allocated()
        del out
    measured["prefill_peak_mib"] = mib(pp)
    measured["peak_allocated_mib"] = mib(pp)
    times = []
    for _ in range(FORWARD_REPEATS):
        sync()
        t0 = time.perf_counter()
        with torch.inference_mode(), ctx():
            out = _call_forward(model, kind, x)
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
            del out
    if times:
        observed["forward_times_ms"] = [round(t, 2) for t in times]
        measured["forward_time_ms"] = round(statistics.median(times), 2)


def _infer_seq2seq(case, model, measured, observed):
    """Encoder-decoder inference (CASE-FORMAT.md): the prefill is one forward of the encoder over batch_size x seq_len
    ids plus the first decoder step (decoder_input_ids [B, 1] = decoder_start_token_id) with use_cache=True, which
    fills the EncoderDecoderCache (self-attention: one position per layer; cross-attention: the encoder's keys and
    values per layer); kv_cache_mib = allocated after it (output and encoder states dropped, cache kept) minus
    before. Then, with generate_tokens set, greedy generate() of that many new tokens (encoder once inside it).
    Whisper (speech): log-mel input_features [B, num_mel_bins, seq_len] in the model's dtype instead of token ids."""
    import contextlib
    import torch
    alloc = torch.cuda.memory_allocated
    peak = torch.cuda.max_memory_allocated
    sync = torch.cuda.synchronize
    B, L = int(case["batch_size"]), int(case["seq_len"])
    N = int(case.get("generate_tokens") or 0)
    ac_dtype = _autocast_dtype(case["precision"])
    ctx = (lambda: torch.autocast("cuda", dtype=ac_dtype)) if ac_dtype is not None else contextlib.nullcontext
    start = getattr(model.config, "decoder_start_token_id", None)
    if start is None:  # T5GemmaConfig has none: generate() falls back to bos_token_id (the decoder's, 2)
        start = getattr(model.generation_config, "decoder_start_token_id", None)
    if start is None:
        start = getattr(model.generation_config, "bos_token_id", None)
    if start is None:
        start = getattr(getattr(model.config, "decoder", None), "bos_token_id", 0)
    start = int(start)
    speech = model.config.model_type in SPEECH_TYPES
    if speech:  # log-mel features [B, num_mel_bins, seq_len] in the model's dtype, as a feature extractor gives them
        ids = torch.randn(B, int(model.config.num_mel_bins), L, device="cuda", dtype=_dtype_of(case["precision"]))
        # a published Whisper checkpoint's generation_config names <|notimestamps|> (50363, 50364 for large-v3's
        # 51866 words); a config-built model's has none and whisper's generate() needs it
        if getattr(model.generation_config, "no_timestamps_token_id", None) is None:
            model.generation_config.no_timestamps_token_id = int(model.config.vocab_size) - 1502
    else:
        ids = torch.randint(0, int(model.config.vocab_size), (B, L), device="cuda")
    inp = "input_features" if speech else "input_ids"
    dec = torch.full((B, 1), start, dtype=torch.long, device="cuda")
    sync()
    before = alloc()
    _reset_peaks()
    t0 = time.perf_counter()
    with torch.inference_mode(), ctx():
        out = model(**{inp: ids}, decoder_input_ids=dec, use_cache=True)
        sync()
        observed["prefill_time_ms"] = round((time.perf_counter() - t0) * 1e3, 2)
        pp = peak()
        cache = out.past_key_values
        del out
        measured["prefill_peak_mib"] = mib(pp)
        measured["kv_cache_mib"] = mib(alloc() - before)
        del cache
        gp = None
        if N > 0:
            _reset_peaks()
            t0 = time.perf_counter()
            gen = model.generate(**{inp: ids}, max_new_tokens=N, min_new_tokens=N, do_sample=False)
            sync()
            observed["generate_time_ms"] = round((time.perf_counter() - t0) * 1e3, 2)
            gp = peak()
            observed["generated_shape"] = list(gen.shape)
            del gen
    measured["peak_allocated_mib"] = mib(max(pp, gp or 0))
    measured["generate_peak_mib"] = mib(gp) if gp is not None else None


def env_probe():
    """Versions, GPU, the GradientCheckpointingLayer decision source, and SDPA backend choices for common shapes."""
    import inspect
    import torch
    import torch.nn.functional as F
    info = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version()}
    try:
        import transformers
        info["transformers"] = transformers.__version__
        from transformers.modeling_layers import GradientCheckpointingLayer
        info["GradientCheckpointingLayer.__call__"] = inspect.getsource(GradientCheckpointingLayer.__call__)
        from transformers.modeling_utils import PreTrainedModel
        info["PreTrainedModel._set_gradient_checkpointing"] = inspect.getsource(
            PreTrainedModel._set_gradient_checkpointing)
    except Exception as e:  # noqa: BLE001
        info["transformers_error"] = repr(e)
    try:
        import torchvision
        info["torchvision"] = torchvision.__version__
    except Exception as e:  # noqa: BLE001
        info["torchvision_error"] = repr(e)
    p = torch.cuda.get_device_properties(0)
    info["gpu"] = "%s (%d MiB)" % (p.name, p.total_memory >> 20)
    info["gpu_total_bytes"] = p.total_memory
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        info["driver"] = out.splitlines()[0] if out else None
    except Exception as e:  # noqa: BLE001
        info["driver"] = "unknown (%r)" % e
    torch.cuda.init()
    try:
        free, tot = torch.cuda.mem_get_info()
        info["device_used_mib_after_init"] = (tot - free) >> 20  # includes other processes on the GPU
    except Exception:  # noqa: BLE001
        pass
    probe = {}
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        for hd in (64, 128):
            for causal in (True, False):
                for gqa in (False, True):
                    q = torch.empty(2, 8, 256, hd, device="cuda", dtype=dt)
                    k = torch.empty(2, 2 if gqa else 8, 256, hd, device="cuda", dtype=dt)
                    for rg in (False, True):
                        qq, kk = q.clone().requires_grad_(rg), k.clone().requires_grad_(rg)
                        try:
                            c = int(torch._fused_sdp_choice(qq, kk, kk, None, 0.0, causal, enable_gqa=gqa))
                            name = SDPA_NAMES.get(c, str(c))
                        except Exception as e:  # noqa: BLE001
                            name = "error: %s" % e
                        probe["%s hd%d causal=%s gqa=%s grad=%s" % (str(dt).replace("torch.", ""), hd, causal, gqa,
                                                                   rg)] = name
    info["sdpa_choice_probe"] = probe
    return info


def _child_entry(case, out_path, what):
    """Body of a per-case process: never raises, always writes a JSON result file."""
    # A case's allocator settings (e.g. "expandable_segments:True") must be in the environment before this
    # process first touches CUDA; forked children have not, so setting it here is early enough.
    if case is not None and case.get("alloc_conf"):
        os.environ["PYTORCH_ALLOC_CONF"] = case["alloc_conf"]
    try:
        if what == "env":
            res = {"env": env_probe()}
        else:
            res = measure_case(case)
    except BaseException as e:  # noqa: BLE001
        res = {"error": "%s: %s" % (type(e).__name__, str(e)[:1500]),
               "traceback": traceback.format_exc()[-4000:]}
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f)
    os.replace(tmp, out_path)


# ----------------------------------------------------------------------------------------------------------------
# parent side
# ----------------------------------------------------------------------------------------------------------------

def _preimport():
    """Import the heavy modules once in the parent (no CUDA use) so forked children start fast."""
    import importlib
    import torch  # noqa: F401
    import torch.nn.functional  # noqa: F401
    for mod in ["transformers", "transformers.optimization", "transformers.modeling_layers", "torchvision", "peft"] + \
               ["transformers.models.%s.modeling_%s" % (t.replace("-", "_"), t.replace("-", "_")) for t in HF_TYPES]:
        try:
            importlib.import_module(mod)
        except Exception as e:  # noqa: BLE001
            print("[harness] preimport %s failed: %r" % (mod, e), flush=True)
    import torch.cuda
    assert not torch.cuda.is_initialized(), "parent must not initialise CUDA before forking"


class Job:
    def __init__(self, case, what, workdir, launcher, timeout):
        self.case, self.what, self.timeout = case, what, timeout
        cid = case.get("id", what) if case else what
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", cid)
        self.out_path = os.path.join(workdir, safe + ".result.json")
        if os.path.exists(self.out_path):
            os.remove(self.out_path)
        self.t0 = time.time()
        self.proc = None
        self.pid = None
        if launcher == "fork":
            import multiprocessing as mp
            self.proc = mp.get_context("fork").Process(target=_child_entry, args=(case, self.out_path, what))
            self.proc.start()
        else:
            in_path = os.path.join(workdir, safe + ".case.json")
            with open(in_path, "w") as f:
                json.dump(case, f)
            self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", in_path,
                                          self.out_path, what])

    def poll(self):
        """None while running, else the result dict."""
        if isinstance(self.proc, subprocess.Popen):
            rc = self.proc.poll()
        else:
            rc = None if self.proc.is_alive() else self.proc.exitcode
        elapsed = time.time() - self.t0
        if rc is None and elapsed > self.timeout:
            self.kill()
            return {"error": "timeout after %.0f s" % self.timeout}
        if rc is None:
            return None
        if os.path.exists(self.out_path):
            with open(self.out_path) as f:
                res = json.load(f)
        else:
            res = {"error": "child process exited with code %s and no result" % rc}
        res["_wall_s"] = round(elapsed, 1)
        return res

    def kill(self):
        try:
            if isinstance(self.proc, subprocess.Popen):
                self.proc.kill()
                self.proc.wait(10)
            else:
                self.proc.kill()
                self.proc.join(10)
        except Exception:  # noqa: BLE001
            pass


def estimate_gib(case):
    """Scheduling estimate of a case's peak reserved memory (GiB)."""
    if "_est_gib" in case:
        return float(case["_est_gib"])
    if case.get("memory_cap_gib") is not None:
        return float(case["memory_cap_gib"])
    ref = case.get("measured") or {}
    if ref.get("peak_reserved_mib"):
        return ref["peak_reserved_mib"] / 1024.0 * 1.05
    return 20.0


def _device_oom(res):
    """True if an OOM looks like the whole device was full (other cases running) rather than the case's own cap."""
    m = res.get("measured") or {}
    msg = m.get("oom_message") or res.get("error") or ""
    if not (m.get("oom") or "out of memory" in msg):
        return False
    mm = re.search(r"of which ([0-9.]+) (GiB|MiB) is free", msg)
    if not mm:
        return True
    free_gib = float(mm.group(1)) / (1024.0 if mm.group(2) == "MiB" else 1.0)
    return free_gib < 4.0


def run_cases(cases, args, workdir):
    """Runs cases with a memory-budgeted pool; returns {id: result}."""
    results = {}
    pending = sorted(cases, key=lambda c: -estimate_gib(c))  # big first, small ones fill the gaps
    running = []
    retry = []
    budget = args.mem_budget_gib
    out_partial = open(args.partial, "a") if args.partial else None
    t_start = time.time()

    def used():
        return sum(estimate_gib(j.case) for j in running)

    while pending or running:
        started = True
        while pending and len(running) < args.jobs and started:
            started = False
            for i, c in enumerate(pending):
                e = estimate_gib(c)
                if not running or used() + e <= budget:
                    running.append(Job(c, "case", workdir, args.launcher, args.timeout))
                    pending.pop(i)
                    started = True
                    break
        time.sleep(0.2)
        for j in list(running):
            res = j.poll()
            if res is None:
                continue
            running.remove(j)
            cid = j.case["id"]
            concurrent = len(running) > 0 or args.jobs > 1
            if _device_oom(res) and args.jobs > 1 and not j.case.get("_retried"):
                print("[harness] %s: device-level OOM with other cases running; will retry alone" % cid, flush=True)
                c2 = dict(j.case)
                c2["_retried"] = True
                retry.append(c2)
                continue
            res["_concurrent"] = concurrent
            results[cid] = res
            line = _status_line(j.case, res)
            print("[harness] %6.1fs %s" % (time.time() - t_start, line), flush=True)
            if out_partial:
                out_partial.write(json.dumps(merge(j.case, res)) + "\n")
                out_partial.flush()
    for c in retry:  # alone, one at a time
        j = Job(c, "case", workdir, args.launcher, args.timeout)
        while True:
            time.sleep(0.2)
            res = j.poll()
            if res is not None:
                break
        res["_concurrent"] = False
        results[c["id"]] = res
        print("[harness] %6.1fs (retry alone) %s" % (time.time() - t_start, _status_line(c, res)), flush=True)
        if out_partial:
            out_partial.write(json.dumps(merge(c, res)) + "\n")
            out_partial.flush()
    if out_partial:
        out_partial.close()
    return results


def _status_line(case, res):
    if "error" in res:
        return "%-48s ERROR %s" % (case["id"], res["error"][:200])
    m = res["measured"]
    if m.get("oom"):
        return "%-48s OOM   reserved %.1f MiB  (%s)" % (case["id"], m.get("peak_reserved_mib", 0),
                                                       m.get("oom_message", "")[:80])
    return "%-48s ok    peak_alloc %.1f MiB  reserved %.1f MiB  %s  wall %.1fs" % (
        case["id"], m.get("peak_allocated_mib", 0), m.get("peak_reserved_mib", 0),
        ("step %.1f ms" % m["step_time_ms"]) if "step_time_ms" in m else "", res.get("_wall_s", 0))


def merge(case, res):
    out = {k: v for k, v in case.items() if not k.startswith("_") and k != "measured"}
    if "error" in res:
        out["error"] = res["error"]
        if "traceback" in res:
            out["error_traceback"] = res["traceback"]
        return out
    out["measured"] = res["measured"]
    obs = dict(res.get("observed", {}))
    obs["concurrent_cases"] = bool(res.get("_concurrent"))
    out["observed"] = obs
    return out


def deviation_report(ref_cases, new_cases):
    """Max relative deviations of new vs reference measured values."""
    ref = {c["id"]: c for c in ref_cases if "measured" in c}
    rows, worst = [], {"peak_allocated_mib": (0, None), "weights_mib": (0, None), "phases": (0, None),
                       "peak_reserved_mib": (0, None)}

    def upd(key, r, cid, what):
        if r > worst[key][0]:
            worst[key] = (r, "%s %s" % (cid, what))

    for c in new_cases:
        r = ref.get(c["id"])
        if r is None or "measured" not in c:
            continue
        a, b = r["measured"], c["measured"]
        if a.get("oom") != b.get("oom"):
            rows.append("%s: oom mismatch ref=%s new=%s" % (c["id"], a.get("oom"), b.get("oom")))
        for k in ("peak_allocated_mib", "weights_mib", "peak_reserved_mib", "prefill_peak_mib", "kv_cache_mib",
                  "generate_peak_mib"):
            if a.get(k) and b.get(k) is not None:
                rel = abs(b[k] - a[k]) / a[k]
                key = k if k in worst else "phases"
                upd(key, rel, c["id"], k)
                if rel > 0.01:
                    rows.append("%s %s: ref %.1f new %.1f (%.2f%%)" % (c["id"], k, a[k], b[k], 100 * rel))
        for si, (sa, sb) in enumerate(zip(a.get("steps", []), b.get("steps", []))):
            for k in PHASE_KEYS:
                if sa.get(k):
                    rel = abs(sb[k] - sa[k]) / sa[k]
                    upd("phases", rel, c["id"], "step%d.%s" % (si + 1, k))
                    if rel > 0.01:
                        rows.append("%s step%d %s: ref %.1f new %.1f (%.2f%%)" % (c["id"], si + 1, k, sa[k], sb[k],
                                                                                100 * rel))
    lines = ["max relative deviation vs reference:"]
    for k, (v, where) in worst.items():
        lines.append("  %-20s %.3f%%  (%s)" % (k, 100 * v, where))
    lines += ["  > 1%%: %s" % r for r in rows] if rows else ["  no value deviates by more than 1%"]
    return "\n".join(lines)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="?", help="input JSONL of cases")
    ap.add_argument("--out", help="output JSONL (cases + measured); default: stdout summary only")
    ap.add_argument("--partial", help="also append each result here as soon as it finishes (default OUT.partial)")
    ap.add_argument("--env", help="write the environment probe (versions, GPU, driver) to this JSON file")
    ap.add_argument("--only", action="append", help="run only this case id (repeatable; regex if it has ^ or $)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per case (default 180)")
    ap.add_argument("--jobs", type=int, default=1, help="cases measured concurrently on the GPU (default 1)")
    ap.add_argument("--mem-budget-gib", type=float, default=110.0,
                    help="sum of running cases' estimated peak reserved GiB (default 110)")
    ap.add_argument("--launcher", choices=["fork", "subprocess"], default="fork")
    ap.add_argument("--compare", nargs=2, metavar=("REF", "NEW"), help="only print deviations of NEW vs REF")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        in_path, out_path, what = args.child
        case = json.load(open(in_path)) if what == "case" else None
        _child_entry(case, out_path, what)
        return 0
    if args.compare:
        print(deviation_report(read_jsonl(args.compare[0]), read_jsonl(args.compare[1])))
        return 0
    if not args.cases and not args.env:
        ap.error("a cases file is required (or --env alone for the environment probe)")

    cases = read_jsonl(args.cases) if args.cases else []
    ids = [c.get("id") for c in cases]
    if len(set(ids)) != len(ids):
        dup = sorted(set(i for i in ids if ids.count(i) > 1))
        ap.error("duplicate case ids: %s" % dup)
    if args.only:
        pats = [re.compile(o) if ("^" in o or "$" in o) else None for o in args.only]
        cases = [c for c in cases if any((p.search(c["id"]) if p else c["id"] == o) for p, o in zip(pats, args.only))]
    print("[harness] %d cases, jobs=%d, launcher=%s, timeout=%.0fs" % (len(cases), args.jobs, args.launcher,
                                                                     args.timeout), flush=True)
    if args.launcher == "fork":
        _preimport()
    workdir = tempfile.mkdtemp(prefix="memplan-harness-")
    t0 = time.time()
    if args.env:
        j = Job(None, "env", workdir, args.launcher, args.timeout)
        while True:
            time.sleep(0.2)
            r = j.poll()
            if r is not None:
                break
        env = r.get("env", r)
        env["harness_jobs"] = args.jobs
        env["harness_launcher"] = args.launcher
        with open(args.env, "w") as f:
            json.dump(env, f, indent=1)
        print("[harness] env: %s" % json.dumps({k: env.get(k) for k in ("gpu", "driver", "torch", "transformers",
                                                                       "torchvision", "cuda", "cudnn")}), flush=True)
    if args.partial is None and args.out:
        args.partial = args.out + ".partial"
    if args.partial and os.path.exists(args.partial):
        os.remove(args.partial)
    results = run_cases(cases, args, workdir)
    merged = [merge(c, results[c["id"]]) for c in cases if c["id"] in results]
    if args.out:
        with open(args.out, "w") as f:
            for m in merged:
                f.write(json.dumps(m) + "\n")
    n_err = sum(1 for m in merged if "error" in m)
    n_oom = sum(1 for m in merged if m.get("measured", {}).get("oom"))
    print("\n[harness] summary: %d cases in %.1f s: %d ok, %d oom, %d error" % (
        len(merged), time.time() - t0, len(merged) - n_err - n_oom, n_oom, n_err))
    for m in merged:
        if "error" in m:
            print("  ERROR %s: %s" % (m["id"], m["error"][:300]))
    if any("measured" in c for c in cases):
        print(deviation_report(cases, [m for m in merged if "measured" in m]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
