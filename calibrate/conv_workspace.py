#!/usr/bin/env python3
"""Measures the workspace cuDNN asks PyTorch's caching allocator for in each convolution pass, per shape.

Why: with torch.backends.cudnn.benchmark off (the default) PyTorch takes cuDNN's heuristic engine for the shape and
allocates that engine's workspace from the caching allocator for the duration of the call (forward: after the
output; backward: one after grad_input for dgrad, one after grad_weight for wgrad). The engine choice is a property
of (GPU, cuDNN version, shape, dtype) that no closed formula reproduces (the ResNet-50 trace shows 400 B for 1x1,
~2x the input for 3x3 in layer1, 8x in layer2), so it is measured here and replayed by the engine from a table.

How: every conv of the torchvision ResNet-18/34/50/101/152 and ViT-B/L patchify stems, at several image sizes,
batch sizes and dtypes, runs forward and convolution_backward once to warm cuDNN's plan cache, then again under
torch.cuda.memory._record_memory_history; allocations freed before the pass returns are its workspaces. The issue 12
families (ConvNeXt, EfficientNet B0-B7 / V2, MobileNet V2 / V3, Swin V1 / V2 stems, DenseNet, VGG, ResNeXt / Wide
ResNet, RegNet X / Y) add their convs at 224 x 224 only (FAMILY_BATCHES), with groups (grouped and depthwise) and
dilation; those rows carry two more columns (groups, dilation). Depthwise convs of fp32 / bf16 run ATen's native
kernels (no cuDNN workspace; measured rows of 0 confirm it). A conv whose input has channels-last strides (ConvNeXt
after its stem: torchvision's and Hugging Face's) runs another cuDNN engine than the contiguous one (its fp32
depthwise backward asks for 8x the activation where the contiguous input runs the native kernel with none), so
its signature carries the layout and it is measured channels-last, the weight already channels-last (the copy
ATen makes of a contiguous weight is the engine's own row, not a workspace). --hf-convnext adds the Hugging Face
ConvNext / ConvNextV2 sizes (atto .. xlarge) at 224 and 384, built on the meta device.

Usage (GPU machine): python3 calibrate/conv_workspace.py OUT.json [--quick] [--no-families] [--models=a,b,...]
                                                             [--hf-convnext] [--channels-last-only]
                                                             [--cl-batches=1,8,...] [--skip=EARLIER.json.gz,...]
                                                             [--depthwise-only] [--min-channels=C]
                                                             [--hf-sizes=224,384] [--hf-widths=96,128,...]
                                                             [--family-sizes=224[,160,...]] [--image-sizes=...]
                                                             [--batches=3,5,...] [--dtypes=bf16,fp32,fp16]
                                                             [--hf-segformer [--seg-sizes=512,...] [--seg-variants=b0,...]
                                                              [--seg-batches=1,2,...]]
                                                             [--patchify]
       (anywhere)     python3 calibrate/conv_workspace.py --table IN.json[,IN2.json...] OUT.tsv
--patchify measures the patch-embedding stems alone (PATCHIFY: kernel = stride, the 3-channel image in, at
PATCHIFY_BATCHES): the VLM towers' shapes the torchvision list lacks, whose workspaces the table's median-ratio
fallback got wrong (InternViT 448 px, mllama 560 px: forward none where the fallback gave 15 .. 58 MiB, wgrad 42 ..
181 MiB where it gave 16 .. 63). --hf-segformer measures SegFormer's convs alone (segformer_signatures: MiT b0 / b1 / b2 widths at SEG_SIZES, batches
SEG_BATCHES; the decode head's channels-last 1x1 convs first). --models= measures only those models' convs (to split a long run); --family-sizes= the image sizes the issue 12
families' convs are measured at (default 224: the engine rescales a shape measured at another spatial size by
pixel count, which holds for the ResNet rows (0.14 % of the bytes at 160 / 288 from 224) but not for every
engine: mobilenet_v2's 320 -> 1280 1x1 wgrad at 5 x 5 takes n x the fp32 weight, 150 MiB at n = 96 where the
rescaled 224 row gives 77); --image-sizes= replaces the ResNet / ViT image sizes (160, 224, 288); --batches= replaces every model's batch list (a
later run adding batch sizes: 2026-12-01 added 3, 5, 6, 10, 12, 20, 24, 40 for the ResNets, whose b24 reserved peak
missed by 5 % when interpolated between 16 and 32); --table merges several runs (a shape measured twice keeps the first run's row). --min-channels= keeps the
signatures with at least C input channels, --hf-sizes= and --hf-widths= (a stage-0 width) narrow --hf-convnext's
models (a dense-batch run split over calls).
The table is what the engine embeds (data/calibration/h200-cudnn-conv-workspace.tsv); IN.json is kept gzipped
next to it as the raw evidence (every allocation of every pass).
"""
import json
import os
import sys
import time


FAMILY_MODELS = ["convnext_tiny", "convnext_small", "convnext_base", "convnext_large"] + \
    ["efficientnet_b%d" % i for i in range(8)] + ["efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l",
                                                 "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large",
                                                 "swin_t", "swin_s", "swin_b", "swin_v2_t", "swin_v2_s", "swin_v2_b",
                                                 "densenet121", "densenet161", "densenet169", "densenet201",
                                                 "vgg11", "vgg13", "vgg16", "vgg19", "resnext50_32x4d",
                                                 "resnext101_32x8d", "resnext101_64x4d", "wide_resnet50_2",
                                                 "wide_resnet101_2"] + \
    ["regnet_y_" + v for v in ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf")] + \
    ["regnet_x_" + v for v in ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf")]
FAMILY_BATCHES = [1, 8, 16, 32, 64, 128]
# Channels-last shapes: the engines change with the batch more often than the dense NCHW ones do.
CL_BATCHES = [1, 4, 8, 16, 24, 32, 48, 64, 96, 128]
# Hugging Face ConvNext (tiny .. xlarge) and ConvNextV2 (atto .. huge) stage widths; depths do not change the shapes.
HF_CONVNEXT = {"hf-convnext-%d" % w[0]: w for w in ((96, 192, 384, 768), (128, 256, 512, 1024), (192, 384, 768, 1536),
                                                    (256, 512, 1024, 2048), (40, 80, 160, 320), (48, 96, 192, 384),
                                                    (64, 128, 256, 512), (80, 160, 320, 640),
                                                    (352, 704, 1408, 2816))}
HF_SIZES = (224, 384)
# Hugging Face SegFormer (MiT encoders, SegformerDecodeHead): per variant the stage widths, the decode head's width
# and the sequence-reduction ratios (b2 .. b5 share b2's widths and differ in depth only). Every conv of the model
# is listed by rule (segformer_signatures), not traced on the meta device: its layouts come from views
# (the sr conv's and the depthwise conv's inputs), which the meta kernels of cat / interpolate would not tell.
HF_SEGFORMER = {"b0": ((32, 64, 160, 256), 256), "b1": ((64, 128, 320, 512), 256), "b2": ((64, 128, 320, 512), 768)}
SEG_SR = (8, 4, 2, 1)
SEG_SIZES = (224, 512, 640, 768, 1024)
SEG_LABELS = (150, 19)  # ADE20k, Cityscapes
SEG_BATCHES = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16]
# Patch embeddings (Conv2d(3, width, kernel = stride = patch, no padding) on the image): the stems of the Hugging
# Face ViT-style vision towers (CLIP, SigLIP, DINOv2, InternViT, mllama, ViT / DeiT / BEiT) and Swin's patch-4 stem,
# at the widths and image sizes the zoo's configurations use. Per patch size: (widths, image sizes).
PATCHIFY = {14: ((384, 768, 1024, 1152, 1280, 1408, 1536), (224, 336, 384, 448, 518, 560, 896)),
            16: ((192, 384, 768, 1024, 1152), (224, 256, 384, 512)),
            32: ((768,), (224, 384)),
            4: ((96, 128, 192), (192, 224, 256, 384))}
PATCHIFY_BATCHES = [1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32]


def patchify_signatures():
    """The PATCHIFY stems as conv_signatures gives signatures (contiguous NCHW images, groups = dilation = 1)."""
    return {(3, c, P, P, 0, R, R, 1, 1, False): {"patchify-%d" % P} for P, (widths, sizes) in PATCHIFY.items()
            for c in widths for R in sizes}


def channels_last(x):
    """True where x has channels-last strides and is not also contiguous (what cuDNN's layout choice sees). On the
    meta device a conv's output is contiguous (the meta kernel does not pick cuDNN's layout), so a ConvNeXt conv
    after the stem is marked channels-last by model, as it is on the GPU (the stem's LayerNorm permutes back)."""
    import torch
    return x.dim() == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last)


def conv_signatures(image_sizes, family_sizes=(224,), families=True, only=None, hf_convnext=False,
                    hf_sizes=HF_SIZES, hf_widths=None):
    """Unique (C, K, kernel, stride, pad, H, W, groups, dilation, channels_last) of every Conv2d in the models at
    each image size (batch 1), mapped to the models using it."""
    import torch
    import torchvision
    sigs = {}
    makers = {"resnet18": torchvision.models.resnet18, "resnet34": torchvision.models.resnet34,
              "resnet50": torchvision.models.resnet50, "resnet101": torchvision.models.resnet101,
              "resnet152": torchvision.models.resnet152, "vit_b_16": torchvision.models.vit_b_16,
              "vit_b_32": torchvision.models.vit_b_32, "vit_l_16": torchvision.models.vit_l_16}
    if families:
        makers.update({n: getattr(torchvision.models, n) for n in FAMILY_MODELS})
    if only:
        makers = {n: getattr(torchvision.models, n) for n in only}
    for name, make in makers.items():
        for R in (family_sizes if name in FAMILY_MODELS else image_sizes):
            if name.startswith("vit") and R != 224:
                continue  # torchvision's ViT checks the image size it was built for
            collect_signatures(torch, sigs, make().to("meta"), name, R, name.startswith("convnext"))
    if hf_convnext:
        import transformers
        for name, widths in HF_CONVNEXT.items():
            if hf_widths and widths[0] not in hf_widths:
                continue
            for v2 in (False, True):
                cfg_cls = transformers.ConvNextV2Config if v2 else transformers.ConvNextConfig
                model_cls = transformers.ConvNextV2Model if v2 else transformers.ConvNextModel
                for R in hf_sizes:
                    with torch.device("meta"):
                        m = model_cls(cfg_cls(hidden_sizes=list(widths), depths=[1, 1, 1, 1], image_size=R))
                    collect_signatures(torch, sigs, m, name.replace("convnext", "convnextv2" if v2 else "convnext"), R, True)
    return sigs


def segformer_signatures(sizes=SEG_SIZES, variants=None):
    """SegformerForSemanticSegmentation's convs (signatures as conv_signatures gives them) at each image size:
    the overlapping patch embeddings (contiguous NCHW: the image, then each block's .contiguous() output; 7x7 stride
    4 pad 3, then 3x3 stride 2 pad 1), the sequence-reduction convs (kernel = stride = sr, input a permuted view:
    channels-last), Mix-FFN's depthwise 3x3 (4x the width, a transposed view: channels-last), the decode head's
    linear_fuse (1x1, 4 D -> D, no bias) and classifier (1x1, D -> labels) on the channels-last maps at a quarter of
    the image."""
    sigs = {}
    for name, (widths, dec) in HF_SEGFORMER.items():
        if variants and name not in variants:
            continue
        tag = "hf-segformer-" + name
        for R in sizes:
            side, c_in = R, 3
            for i, c in enumerate(widths):
                k, st = (7, 4) if i == 0 else (3, 2)
                sigs.setdefault((c_in, c, k, st, k // 2, side, side, 1, 1, False), set()).add(tag)
                side = (side + 2 * (k // 2) - k) // st + 1
                if SEG_SR[i] > 1:
                    sigs.setdefault((c, c, SEG_SR[i], SEG_SR[i], 0, side, side, 1, 1, True), set()).add(tag)
                sigs.setdefault((4 * c, 4 * c, 3, 1, 1, side, side, 4 * c, 1, True), set()).add(tag)
                c_in = c
            q = (R + 6 - 7) // 4 + 1
            sigs.setdefault((4 * dec, dec, 1, 1, 0, q, q, 1, 1, True), set()).add(tag)
            for labels in SEG_LABELS:
                sigs.setdefault((dec, labels, 1, 1, 0, q, q, 1, 1, True), set()).add(tag)
    return sigs


def collect_signatures(torch, sigs, m, tag, R, channels_last_after_stem):
    """Runs the meta model m on one [1, 3, R, R] image and adds each Conv2d's signature to sigs under tag.
    channels_last_after_stem: a ConvNeXt, whose convs after the stem are channels-last on the GPU."""
    hooks = []

    def hook(mod, inp, out):
        x = inp[0]
        key = (mod.in_channels, mod.out_channels, mod.kernel_size[0], mod.stride[0], mod.padding[0],
               x.shape[2], x.shape[3], mod.groups, mod.dilation[0],
               channels_last(x) or (channels_last_after_stem and mod.in_channels != 3))
        sigs.setdefault(key, set()).add(tag)

    for mod in m.modules():
        if isinstance(mod, torch.nn.Conv2d):
            hooks.append(mod.register_forward_hook(hook))
    with torch.no_grad():
        m(torch.empty(1, 3, R, R, device="meta"))
    for h in hooks:
        h.remove()


MARK_BYTES = 512 * 7919  # an allocation size nothing else in a conv makes: splits the trace into passes


def measure(torch, F, sig, n, dtype, needs_dgrad):
    C, K, k, s, p, H, W, g, d, cl = sig
    x = torch.randn(n, C, H, W, device="cuda", dtype=dtype)
    w = torch.randn(K, C // g, k, k, device="cuda", dtype=dtype)
    if cl:
        x = x.contiguous(memory_format=torch.channels_last)
        w = w.contiguous(memory_format=torch.channels_last)
    y = F.conv2d(x, w, None, s, p, d, g)
    gy = torch.randn_like(y)  # keeps y's layout, as the gradient a channels-last model sends back
    mask = [needs_dgrad, True, False]

    def backward():
        return torch.ops.aten.convolution_backward(gy, x, w, None, [s, s], [p, p], [d, d], False, [0, 0], g, mask)

    del y
    backward()  # warm cuDNN's plan caches for all three passes
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(max_entries=4096, context=None, stacks="python")
    m0 = torch.empty(MARK_BYTES, dtype=torch.uint8, device="cuda")
    del m0
    y = F.conv2d(x, w, None, s, p, d, g)
    m1 = torch.empty(MARK_BYTES, dtype=torch.uint8, device="cuda")
    del m1
    grads = backward()
    m2 = torch.empty(MARK_BYTES, dtype=torch.uint8, device="cuda")
    del m2
    torch.cuda.synchronize()
    events = [(e["action"], e["addr"], e["size"]) for e in torch.cuda.memory._snapshot()["device_traces"][0]]
    torch.cuda.memory._record_memory_history(enabled=None)
    marks = [i for i, e in enumerate(events) if e[0] == "alloc" and e[2] == MARK_BYTES]
    assert len(marks) >= 3, "markers missing from the trace"
    marks = marks[-3:]

    def pass_events(lo, hi):
        """The ordered allocations of one pass: ('keep', bytes) or ('temp', bytes) for those freed inside it."""
        out, open_ = [], {}
        for i in range(lo + 1, hi):
            act, addr, size = events[i]
            if act == "alloc" and size != MARK_BYTES:
                open_[addr] = len(out)
                out.append(["keep", size])
            elif act == "free_requested" and addr in open_:
                out[open_.pop(addr)][0] = "temp"
        return out

    fwd = pass_events(marks[0], marks[1])
    bwd = pass_events(marks[1], marks[2])
    del y, grads, gy, x, w
    # forward: [keep y, temp ws...]; backward: [keep grad_input, temp dgrad ws..., keep grad_weight, temp wgrad ws...]
    fwd_ws = [b for kind, b in fwd if kind == "temp"]
    keeps = [i for i, (kind, _) in enumerate(bwd) if kind == "keep"]
    weight_at = keeps[1] if needs_dgrad and len(keeps) > 1 else (keeps[0] if keeps else len(bwd))
    dgrad_ws = [b for i, (kind, b) in enumerate(bwd) if kind == "temp" and i < weight_at]
    wgrad_ws = [b for i, (kind, b) in enumerate(bwd) if kind == "temp" and i > weight_at]
    return {"fwd": fwd, "bwd": bwd, "fwd_ws": fwd_ws, "dgrad_ws": dgrad_ws, "wgrad_ws": wgrad_ws}


def write_table(in_path, out_path):
    """One line per (shape, n, dtype): the workspace bytes of forward, dgrad (-1: not measured, the input needs no
    gradient) and wgrad; a pass with several workspaces (none seen on the H200) would be summed."""
    import gzip
    d, seen = None, set()
    for path in in_path.split(","):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            run = json.load(f)
        if d is None:
            d = {"environment": run["environment"], "rows": []}
        for r in run["rows"]:
            key = (r["c"], r["k"], r["kernel"], r["stride"], r["pad"], r["h"], r["w"], r.get("groups", 1),
                   r.get("dilation", 1), r.get("layout", "nchw"), r["dtype"], r["n"])
            if key not in seen:
                seen.add(key)
                d["rows"].append(r)
    env = d["environment"]
    lines = ["# memplan-conv-workspace/1: bytes cuDNN's heuristic engine asks the caching allocator for, per "
             "convolution pass (calibrate/conv_workspace.py)",
             "# " + " ".join(f"{k}={str(v).replace(' ', '_')}" for k, v in env.items()),
             "# c_in c_out kernel stride pad h w n dtype forward dgrad wgrad [groups dilation [layout]]"]
    for r in sorted(d["rows"], key=lambda r: (r["c"], r["k"], r["kernel"], r["stride"], r["pad"], r["h"], r["w"],
                                              r.get("groups", 1), r.get("dilation", 1), r.get("layout", "nchw"),
                                              r["dtype"], r["n"])):
        dgrad = sum(r["dgrad_ws"]) if r["dgrad"] else -1
        g, dil, layout = r.get("groups", 1), r.get("dilation", 1), r.get("layout", "nchw")
        tail = f" {g} {dil}" if (g, dil, layout) != (1, 1, "nchw") else ""  # the original 12 columns
        tail += " nhwc" if layout == "nhwc" else ""
        lines.append(f'{r["c"]} {r["k"]} {r["kernel"]} {r["stride"]} {r["pad"]} {r["h"]} {r["w"]} {r["n"]} '
                     f'{r["dtype"]} {sum(r["fwd_ws"])} {dgrad} {sum(r["wgrad_ws"])}{tail}')
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    if sys.argv[1] == "--table":
        write_table(sys.argv[2], sys.argv[3])
        return
    import torch
    import torch.nn.functional as F
    out_path = sys.argv[1]
    quick = "--quick" in sys.argv
    opt = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in sys.argv[2:] if "=" in a}
    image_sizes = [224] if quick else [160, 224, 288]
    if "--image-sizes" in opt:
        image_sizes = [int(v) for v in opt["--image-sizes"].split(",")]
    batches = [8, 64] if quick else [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256]
    forced_batches = "--batches" in opt  # one batch list for every model (added batch sizes of a later run)
    if forced_batches:
        batches = [int(v) for v in opt["--batches"].split(",")]
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    if "--dtypes" in opt:
        dtypes = {k: dtypes[k] for k in opt["--dtypes"].split(",")}
    only = next((a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--models=")), None)
    fam = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--family-sizes=")), "224")
    family_sizes = tuple(int(v) for v in fam.split(","))
    sigs = {} if "--hf-segformer" in sys.argv or "--patchify" in sys.argv else conv_signatures(
        image_sizes, family_sizes=family_sizes, families="--no-families" not in sys.argv, only=only,
                           hf_convnext="--hf-convnext" in sys.argv,
                           hf_sizes=tuple(int(v) for v in opt.get("--hf-sizes", "224,384").split(",")),
                           hf_widths=[int(v) for v in opt["--hf-widths"].split(",")] if "--hf-widths" in opt else None)
    if "--hf-segformer" in sys.argv:  # SegFormer's convs alone (the other models' lists are not measured)
        sigs = segformer_signatures(tuple(int(v) for v in opt.get("--seg-sizes", ",".join(map(str, SEG_SIZES))).split(",")),
                                    opt["--seg-variants"].split(",") if "--seg-variants" in opt else None)
        # the decode head's 1x1 convs first (a run stopped by its time limit keeps them)
        order = sorted(sigs, key=lambda k: (k[2] != 1, k))
    if "--patchify" in sys.argv:  # the patch-embedding stems alone (PATCHIFY), at PATCHIFY_BATCHES
        sigs = patchify_signatures()
    if "--channels-last-only" in sys.argv:  # and the Hugging Face models' other convs (their stems)
        sigs = {k: v for k, v in sigs.items() if k[-1] or any(m.startswith("hf-") for m in v)}
    if "--depthwise-only" in sys.argv:  # groups == c_in: the channels-last fp32 engines change with n (dense batches)
        sigs = {k: v for k, v in sigs.items() if k[7] == k[0] and k[0] > 1}
    if "--min-channels" in opt:  # a later run continuing a dense one that stopped at its time limit
        sigs = {k: v for k, v in sigs.items() if k[0] >= int(opt["--min-channels"])}
    cl_batches = [int(v) for v in opt["--cl-batches"].split(",")] if "--cl-batches" in opt else CL_BATCHES
    done = set()  # (signature, dtype) measured by an earlier run: --skip=a.json.gz,b.json.gz
    for path in (opt["--skip"].split(",") if "--skip" in opt else []):
        import gzip
        with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
            for r in json.load(f)["rows"]:
                done.add(((r["c"], r["k"], r["kernel"], r["stride"], r["pad"], r["h"], r["w"], r.get("groups", 1),
                           r.get("dilation", 1), r.get("layout", "nchw") == "nhwc"), r["dtype"]))
    t0 = time.time()
    rows = []
    if "--hf-segformer" not in sys.argv:
        order = sorted(sigs)
    for sig in order:
        stem = sig[0] == 3  # the model input does not require grad: no dgrad pass
        family_only = all(m in FAMILY_MODELS or m.startswith("hf-") for m in sigs[sig])
        sig_batches = (cl_batches if sig[-1] else FAMILY_BATCHES)
        if all(m.startswith("patchify") for m in sigs[sig]):
            sig_batches, family_only = PATCHIFY_BATCHES, True
        if all(m.startswith("hf-segformer") for m in sigs[sig]):
            sig_batches = [int(v) for v in opt["--seg-batches"].split(",")] if "--seg-batches" in opt else SEG_BATCHES
        for dname, dt in dtypes.items():
            if (sig, dname) in done:
                continue
            for n in (sig_batches if family_only and not quick and not forced_batches else batches):
                try:
                    r = measure(torch, F, sig, n, dt, not stem)
                except torch.OutOfMemoryError:
                    continue
                C, K, k, s, p, H, W, g, d, cl = sig
                rows.append({"c": C, "k": K, "kernel": k, "stride": s, "pad": p, "h": H, "w": W, "n": n,
                             "groups": g, "dilation": d, "layout": "nhwc" if cl else "nchw",
                             "dtype": dname, "dgrad": not stem, "fwd_ws": r["fwd_ws"], "dgrad_ws": r["dgrad_ws"],
                             "wgrad_ws": r["wgrad_ws"], "fwd_events": r["fwd"], "bwd_events": r["bwd"],
                             "models": sorted(sigs[sig])})
        print(f"{sig} done, {len(rows)} rows, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
        if len(rows) and order.index(sig) % 10 == 9:
            dump(torch, out_path, rows, t0)  # a run stopped by its time limit keeps what it measured
    dump(torch, out_path, rows, t0)


def dump(torch, out_path, rows, t0):
    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "cudnn_benchmark": torch.backends.cudnn.benchmark,
           "allow_tf32_cudnn": torch.backends.cudnn.allow_tf32,
           "date": time.strftime("%Y-%m-%d"), "seconds": round(time.time() - t0, 1)}
    with open(out_path + ".part", "w") as f:
        json.dump({"format": "memplan-conv-workspace/1", "environment": env, "rows": rows}, f)
    os.replace(out_path + ".part", out_path)


if __name__ == "__main__":
    main()
