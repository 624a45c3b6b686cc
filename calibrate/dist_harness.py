#!/usr/bin/env python3
"""memplan distributed harness: measures one rank of a multi-GPU training step on ONE GPU, with PyTorch's fake
process group (torch.testing._internal.distributed.fake_pg.FakeStore, backend "fake"): collectives launch no work
and move no data, every allocation the wrapper makes (all-gather outputs, reduce-scatter inputs, DDP buckets, DTensor
redistributions) is real, so torch.cuda.max_memory_allocated() is rank 0's (data/validation/CASE-FORMAT.md,
"Distributed cases").

One case per process (the fake group is initialised once per process):

    python3 calibrate/dist_harness.py CASES.jsonl CASE_ID OUT.json      # one case -> {measured, observed} case
    python3 calibrate/dist_harness.py --env ENV.json                    # versions (harness.env_probe + fake PG)

calibrate/record_dist_events.py runs a case the same way with a whole-run allocator recording (streams kept);
calibrate/record_dist_cases.sh runs a file of cases, several processes at a time.

What runs, per `distributed.strategy` (the case's `distributed` object: engine/run_config.h DistributedConfig):
- fsdp2: the HF model is built on the meta device, gradient checkpointing enabled on it (as the single-GPU
  harness), then `fully_shard(layer, mesh, reshard_after_forward=R, mp_policy=MixedPrecisionPolicy(param_dtype,
  reduce_dtype))` on every decoder layer and then on the root (the torchtitan / accelerate recipe; FSDP2 itself
  keeps the root's parameters unsharded after forward), `model.to_empty(device="cuda")`, parameters filled
  N(0, 0.02) shard by shard, buffers (RoPE inv_freq) copied from a 1-layer CPU build. So the weights peak is the
  sharded state only (no full replica ever exists on the GPU). With tp > 1 the TP plan below is applied on the
  meta model first, on mesh["tp"], and fully_shard uses mesh["dp"] (2D).
- tp (strategy "none" with tp > 1): the TP plan on a 1-D mesh of world_size = tp, meta init as above.
  Plan (torchtitan's, written for HF Llama modules): q/k/v/gate/up ColwiseParallel, o/down RowwiseParallel,
  embed_tokens RowwiseParallel(input_layouts=Replicate()) (vocabulary-parallel embedding, output all-reduced),
  lm_head ColwiseParallel(output_layouts=Replicate()) (logits all-gathered: no loss_parallel), norms replicated.
  sequence_parallel: the decoder layers take and return [B, S/tp, H] (layer 0's input: PrepareModuleInput
  Replicate -> Shard(1)), input / post-attention / final norms SequenceParallel, self_attn and mlp inputs
  all-gathered (PrepareModuleInput Shard(1) -> Replicate), o/down RowwiseParallel(output_layouts=Shard(1)),
  lm_head ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate()). The embedding output stays
  full-length so that HF's mask / position ids see the whole sequence.
- ddp: model built on the GPU (harness.build_model: the full replica), then DistributedDataParallel(model,
  device_ids=[0], bucket_cap_mb, gradient_as_bucket_view, static_graph) with a communication hook that divides
  the bucket by world_size in place and returns the bucket's own buffer (what the default all-reduce hook returns
  after an in-place all-reduce; the fake group's own future yields None, which DDP cannot use).
- zero1: ddp as above, optimizer torch.distributed.optim.ZeroRedundancyOptimizer(params, optimizer_class=<the
  case's optimizer>) (optimizer state for rank 0's partition; every rank's parameters broadcast after step).
Then harness._train: the same 3 steps and phase bookkeeping as the single-GPU harness (batch per rank =
batch_size, labels = ids). DeepSpeed is not on the image: ZeRO-2 / ZeRO-3 are not measured here.
"""
import gzip
import json
import os
import re
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

MIB = harness.MIB
mib = harness.mib
_ZERO = []  # the ZeroRedundancyOptimizer a zero1 case made (harness._train keeps its optimizer local)
STRATEGIES = ("none", "ddp", "fsdp2", "zero1", "zero2", "zero3")
DIST_KEYS = ("strategy", "world_size", "tp", "pp", "cp", "sequence_parallel", "rank", "reshard_after_forward",
             "param_dtype", "reduce_dtype", "bucket_cap_mb", "gradient_as_bucket_view", "static_graph", "offload")


def _torch_dtype(name):
    import torch
    if not name:
        return None
    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[name]


def dist_config(case):
    d = dict(case.get("distributed") or {})
    bad = [k for k in d if k not in DIST_KEYS]
    if bad:
        raise ValueError("unknown distributed keys %s" % bad)
    d.setdefault("strategy", "none")
    d.setdefault("world_size", 1)
    d.setdefault("tp", 1)
    if d["strategy"] not in STRATEGIES:
        raise ValueError("unknown strategy %r" % d["strategy"])
    if d["strategy"] in ("zero2", "zero3"):
        raise ValueError("%s needs DeepSpeed, which is not on the image" % d["strategy"])
    if int(d.get("pp", 1)) != 1 or int(d.get("cp", 1)) != 1:
        raise ValueError("pp / cp are not measured by this harness")
    if int(d.get("rank", 0)) != 0:
        raise ValueError("the fake group measures rank 0 only")
    if d.get("offload", "none") != "none":
        raise ValueError("offload is not measured by this harness")
    ws, tp = int(d["world_size"]), int(d["tp"])
    if ws % tp:
        raise ValueError("world_size %d is not a multiple of tp %d" % (ws, tp))
    return d


def _hf_config(case, **over):
    import transformers
    m = case["model"]
    if m["source"] != "huggingface" or m["model_type"] not in harness.HF_TYPES:
        raise ValueError("distributed cases need a Hugging Face causal LM")
    cfg = transformers.AutoConfig.for_model(m["model_type"], **dict(m.get("config", {}), **over))
    cfg.use_cache = False
    return cfg


def _build_hf(case, device, **over):
    """AutoModelForCausalLM.from_config on `device` (meta / cpu), the model dtype as harness.build_model sets it."""
    import torch
    import transformers
    dtype = harness._dtype_of(case["precision"])
    old = torch.get_default_dtype()
    if dtype != torch.float32:
        torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = transformers.AutoModelForCausalLM.from_config(
                _hf_config(case, **over), attn_implementation=case["model"].get("attn_implementation", "sdpa"))
    finally:
        torch.set_default_dtype(old)
    return model


def _materialize(model, case):
    """to_empty on the GPU, parameters N(0, 0.02) on each local shard, buffers from a 1-layer CPU build."""
    import torch
    from torch.distributed.tensor import DTensor
    model.to_empty(device="cuda")
    with torch.no_grad():
        for p in model.parameters():
            t = p._local_tensor if isinstance(p, DTensor) else p
            t.normal_(0.0, 0.02)
        layers_key = "n_layer" if "n_layer" in case["model"].get("config", {}) else "num_hidden_layers"
        ref = dict(_build_hf(case, "cpu", **{layers_key: 1}).named_buffers())
        for name, b in model.named_buffers():
            src = ref.get(re.sub(r"\.(\d+)\.", ".0.", name))
            t = b._local_tensor if isinstance(b, DTensor) else b
            if src is not None and tuple(src.shape) == tuple(t.shape):
                t.copy_(src)
            else:
                t.zero_()


def _replicate_module(mod, mesh):
    """Parameters as Replicate DTensors, inputs wrapped / outputs unwrapped: a norm that TP leaves whole still
    holds DTensor parameters, so that one optimizer's foreach lists never mix Tensor and DTensor (DTensor refuses
    that) and FSDP2 sees one mesh for every parameter."""
    import torch
    from torch.distributed.tensor import DTensor, Replicate, distribute_module

    def inp(m, inputs, device_mesh):
        return tuple(DTensor.from_local(x, device_mesh, [Replicate()], run_check=False)
                     if torch.is_tensor(x) and not isinstance(x, DTensor) else x for x in inputs)

    def out(m, o, device_mesh):
        return o.to_local() if isinstance(o, DTensor) else o

    distribute_module(mod, mesh, input_fn=inp, output_fn=out)


def _tp_plan(model, mesh, sp):
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)
    base = model.model
    top = {"model.embed_tokens": RowwiseParallel(input_layouts=Replicate(), output_layouts=Replicate())}
    if sp:
        top["model.norm"] = SequenceParallel()
        top["lm_head"] = ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate())
    else:
        top["lm_head"] = ColwiseParallel(output_layouts=Replicate())
        _replicate_module(base.norm, mesh)
    parallelize_module(model, mesh, top)
    for i, layer in enumerate(base.layers):
        if sp:
            plan = {
                "input_layernorm": SequenceParallel(),
                "self_attn": PrepareModuleInput(input_kwarg_layouts={"hidden_states": Shard(1)},
                                                desired_input_kwarg_layouts={"hidden_states": Replicate()}),
                "self_attn.q_proj": ColwiseParallel(), "self_attn.k_proj": ColwiseParallel(),
                "self_attn.v_proj": ColwiseParallel(), "self_attn.o_proj": RowwiseParallel(output_layouts=Shard(1)),
                "post_attention_layernorm": SequenceParallel(),
                "mlp": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
                "mlp.gate_proj": ColwiseParallel(), "mlp.up_proj": ColwiseParallel(),
                "mlp.down_proj": RowwiseParallel(output_layouts=Shard(1)),
            }
            if i == 0:  # the embedding output is full-length (replicated): layer 0 takes its sequence shard
                parallelize_module(layer, mesh, PrepareModuleInput(input_layouts=(Replicate(),),
                                                                   desired_input_layouts=(Shard(1),),
                                                                   use_local_output=True))
        else:
            _replicate_module(layer.input_layernorm, mesh)
            _replicate_module(layer.post_attention_layernorm, mesh)
            plan = {"self_attn.q_proj": ColwiseParallel(), "self_attn.k_proj": ColwiseParallel(),
                    "self_attn.v_proj": ColwiseParallel(), "self_attn.o_proj": RowwiseParallel(),
                    "mlp.gate_proj": ColwiseParallel(), "mlp.up_proj": ColwiseParallel(),
                    "mlp.down_proj": RowwiseParallel()}
        parallelize_module(layer, mesh, plan)


def _rank_numels(model):
    """Parameter elements each rank holds under 1-D FSDP2 (dim-0 torch.chunk of every parameter: ceil(D / N) rows
    per rank, the last ranks fewer or none), rank 0 first; rank 0's entry is the measured local shard's numel."""
    from torch.distributed.tensor import DTensor
    out = None
    for p in model.parameters():
        if not isinstance(p, DTensor):
            continue
        n = p.device_mesh.size()
        if out is None:
            out = [0] * n
        d0 = p.shape[0]
        row = p.numel() // d0 if d0 else 0
        c = -(-d0 // n)
        for r in range(n):
            out[r] += max(0, min(c, d0 - r * c)) * row
    return out


def measure_dist_case(case):
    """Runs one distributed case in this fresh process; returns {measured, observed}."""
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    d = dist_config(case)
    strategy, ws, tp = d["strategy"], int(d["world_size"]), int(d.get("tp", 1))
    sp = bool(d.get("sequence_parallel", False))
    if case["mode"] != "training":
        raise ValueError("distributed cases are training cases")
    torch.cuda.init()
    torch.cuda.set_device(0)
    dist.init_process_group("fake", rank=0, world_size=ws, store=FakeStore())
    measured, observed = {}, {"fake_process_group": True, "world_size": ws, "rank": 0,
                              "backend": str(dist.get_backend())}
    torch.manual_seed(0)
    try:
        if strategy in ("fsdp2", "none"):
            from torch.distributed.device_mesh import init_device_mesh
            dp = ws // tp
            if strategy == "none" and dp != 1:
                raise ValueError("strategy none with world_size %d != tp %d" % (ws, tp))
            if tp > 1 and dp > 1:
                mesh = init_device_mesh("cuda", (dp, tp), mesh_dim_names=("dp", "tp"))
                dp_mesh, tp_mesh = mesh["dp"], mesh["tp"]
            elif tp > 1:
                mesh = tp_mesh = init_device_mesh("cuda", (tp,), mesh_dim_names=("tp",))
                dp_mesh = None
            else:
                mesh = dp_mesh = init_device_mesh("cuda", (dp,), mesh_dim_names=("dp",))
                tp_mesh = None
            observed["mesh"] = {"shape": list(mesh.mesh.shape), "dims": list(mesh.mesh_dim_names or [])}
            model = _build_hf(case, "meta")
            observed["init"] = "meta, to_empty(cuda), local shards N(0, 0.02)"
            model.train()
            observed.update(harness.apply_training_options(model, "causal_lm", case))
            if tp_mesh is not None:
                _tp_plan(model, tp_mesh, sp)
            if strategy == "fsdp2":
                from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
                mp = MixedPrecisionPolicy(param_dtype=_torch_dtype(d.get("param_dtype")),
                                          reduce_dtype=_torch_dtype(d.get("reduce_dtype")))
                raf = d.get("reshard_after_forward", True)
                for layer in harness._decoder_layers(model):
                    fully_shard(layer, mesh=dp_mesh, reshard_after_forward=raf, mp_policy=mp)
                fully_shard(model, mesh=dp_mesh, reshard_after_forward=raf, mp_policy=mp)
            _materialize(model, case)
        elif strategy in ("ddp", "zero1"):
            from torch.nn.parallel import DistributedDataParallel as DDP
            # `load` (CASE-FORMAT.md): the replica built on the CPU and moved (default), or built on the GPU
            to_device = case.get("load", "to_device") == "to_device"
            model, _ = harness.build_model(case, device="cpu" if to_device else "cuda")
            if to_device:
                model = model.to("cuda")
            observed["init"] = ("on the CPU, then model.to('cuda')" if to_device else
                                "on the GPU (harness.build_model)") + ": the full replica"
            model.train()
            observed.update(harness.apply_training_options(model, "causal_lm", case))
            torch.cuda.synchronize()
            observed["weights_before_wrap_mib"] = mib(torch.cuda.memory_allocated())
            base = model
            model = DDP(model, device_ids=[0], bucket_cap_mb=float(d.get("bucket_cap_mb", 25)),
                        gradient_as_bucket_view=bool(d.get("gradient_as_bucket_view", False)),
                        static_graph=bool(d.get("static_graph", False)))

            def _bucket_hook(state, bucket, _ws=ws):
                buf = bucket.buffer()
                buf.div_(_ws)
                fut = torch.futures.Future()
                fut.set_result(buf)
                return fut

            model.register_comm_hook(None, _bucket_hook)
            model.config = base.config  # harness._train reads model.config.vocab_size
            if strategy == "zero1":
                from torch.distributed.optim import ZeroRedundancyOptimizer

                def _zero(params, c):
                    name, impl = c.get("optimizer", "adamw"), c.get("optimizer_impl", "default") or "default"
                    cls, kw = {"adamw": (torch.optim.AdamW, {"lr": 1e-4}), "adam": (torch.optim.Adam, {"lr": 1e-4}),
                               "sgd_momentum": (torch.optim.SGD, {"lr": 1e-3, "momentum": 0.9}),
                               "sgd": (torch.optim.SGD, {"lr": 1e-3})}[name]
                    kw.update({"foreach": {"foreach": True}, "fused": {"fused": True},
                               "forloop": {"foreach": False}, "default": {}}[impl])
                    z = ZeroRedundancyOptimizer(params, optimizer_class=cls, **kw)
                    _ZERO.append(z)
                    return z

                harness.make_optimizer = _zero
        else:
            raise ValueError("strategy %r" % strategy)
        torch.cuda.synchronize()
        from torch.distributed.tensor import DTensor
        measured["params"] = sum(p.numel() for p in model.parameters())
        observed["local_params"] = sum((p.to_local() if isinstance(p, DTensor) else p).numel()
                                       for p in model.parameters())
        measured["weights_mib"] = mib(torch.cuda.memory_allocated())
        measured["oom"] = False
        spy = harness._SdpaSpy()
        harness._train(case, model, "causal_lm", measured, observed, spy)
        measured["peak_reserved_mib"] = harness._run_reserved_peak_mib()
        harness._alloc_counters(observed)
        if _ZERO:
            z = _ZERO[0]
            observed["zero1_local_params"] = sum(p.numel() for g in z.optim.param_groups for p in g["params"])
            observed["zero1_state_mib"] = mib(sum(t.numel() * t.element_size() for st in z.optim.state.values()
                                                  for t in st.values() if torch.is_tensor(t) and t.is_cuda))
        rn = _rank_numels(model) if strategy == "fsdp2" and tp == 1 else None
        if rn:
            observed["rank_local_params"] = rn
    except torch.OutOfMemoryError as e:
        observed["oom_message_full"] = harness._oom_record(e, measured)
        observed["oom_where"] = "".join(traceback.format_exception(e)[-3:])[-1500:]
    if "num_alloc_retries" not in observed:
        harness._alloc_counters(observed)
    return {"measured": measured, "observed": observed}


def env_dist():
    import inspect
    import torch
    import torch.distributed as dist
    info = harness.env_probe()
    info["fake_process_group"] = "torch.testing._internal.distributed.fake_pg.FakeStore, backend 'fake', rank 0"
    try:
        import torch.testing._internal.distributed.fake_pg as fp
        info["fake_pg_source"] = inspect.getsource(fp)[:4000]
    except Exception as e:  # noqa: BLE001
        info["fake_pg_error"] = repr(e)
    try:
        info["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    except Exception as e:  # noqa: BLE001
        info["nccl"] = "unknown (%r)" % e
    try:
        import deepspeed  # noqa: F401
        info["deepspeed"] = deepspeed.__version__
    except Exception:  # noqa: BLE001
        info["deepspeed"] = None
    info["dist_available"] = dist.is_available()
    return info


def run_one(cases_path, case_id):
    case = next(c for c in harness.read_jsonl(cases_path) if c["id"] == case_id)
    try:
        res = measure_dist_case(case)
    except BaseException as e:  # noqa: BLE001
        res = {"error": "%s: %s" % (type(e).__name__, str(e)[:1500]), "traceback": traceback.format_exc()[-4000:]}
    return case, res


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--env":
        with open(sys.argv[2], "w") as f:
            json.dump(env_dist(), f, indent=1)
        return 0
    cases_path, case_id, out_path = sys.argv[1:4]
    case, res = run_one(cases_path, case_id)
    out = harness.merge(case, res)
    opener = gzip.open if out_path.endswith(".gz") else open
    with opener(out_path, "wt") as f:
        json.dump(out, f)
    print(harness._status_line(case, res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
