// Stages: (1) graph_cost walks the forward ops once, classifying each as matmul-like (FLOPs) or memory-bound
// (bytes); (2) step_time turns per-GPU work into seconds per optimizer step with the rates of one device.
#include "engine/plan/time_model.h"

#include <algorithm>
#include <string>

#include "engine/errors.h"
#include "engine/time/case_time.h"

namespace memplan::plan {

namespace {
using timing::nbytes;
using timing::numel;

// Ring collective over `n` ranks moving `bytes` per rank: each rank sends (n-1)/n x bytes per pass.
double ring_s(double bytes, int64_t n, double passes, double link) {
  if (n <= 1 || link <= 0) return 0;
  return passes * bytes * static_cast<double>(n - 1) / static_cast<double>(n) / link;
}
}  // namespace

GraphCost graph_cost(const Graph& g) {
  GraphCost c;
  c.layers = static_cast<int64_t>(g.layers.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const std::string& name = g.name_of(op.name);
    if (name == "view" || name == "select" || op.outs.empty()) continue;
    double flops = 0, bytes = 0;
    const TensorInfo& out = g.tensors[static_cast<size_t>(op.outs[0])];
    const bool attn = name.rfind("sdpa", 0) == 0;
    if (name == "linear" || name == "addmm") {
      const TensorInfo& w = g.tensors[static_cast<size_t>(op.reads[1])];
      flops = 2 * numel(out) * numel(w) / static_cast<double>(std::max<int64_t>(1, out.shape.back()));
    } else if (name == "matmul") {
      const TensorInfo& a = g.tensors[static_cast<size_t>(op.reads[0])];
      flops = 2 * numel(out) * static_cast<double>(a.shape.back());
    } else if (name == "conv2d") {
      const TensorInfo& w = g.tensors[static_cast<size_t>(op.reads[1])];
      flops = 2 * numel(out) * numel(w) / static_cast<double>(std::max<int64_t>(1, w.shape[0]));
    } else if (attn) {
      const TensorInfo& q = g.tensors[static_cast<size_t>(op.reads[0])];
      const TensorInfo& k = g.tensors[static_cast<size_t>(op.reads[1])];
      // q [B, H, Sq, D], k [B, Hkv, Sk, D]: QK^T and PV, causal tiles skipped by fused kernels
      flops = 4 * numel(q) * static_cast<double>(k.shape[2]) * 0.5;
    }
    for (TensorId r : op.reads) bytes += nbytes(g.tensors[static_cast<size_t>(r)]);
    for (TensorId o : op.outs) bytes += nbytes(g.tensors[static_cast<size_t>(o)]);
    if (flops > 0) bytes = 0;  // matmul-like: the FLOPs dominate (the roofline max is taken by step_time)
    c.fwd_flops += flops;
    c.fwd_bytes += bytes;
    c.ops += 1;
    if (op.layer >= 0) {
      if (g.layers[static_cast<size_t>(op.layer)].checkpointed) {
        c.recompute_flops += flops;
        c.recompute_bytes += bytes;
      }
      c.layer_flops += flops;
      c.layer_bytes += bytes;
      if (attn) {
        c.attn_core_flops += flops;
        c.attn_core_bytes += bytes;
      }
    }
  }
  if (c.layers > 0) {
    const double n = static_cast<double>(c.layers);
    c.layer_flops /= n;
    c.layer_bytes /= n;
    c.attn_core_flops /= n;
    c.attn_core_bytes /= n;
  }
  return c;
}

StepTime step_time(const StepWork& w, const DeviceRates& r) {
  StepTime t;
  const ParallelConfig& p = w.par;
  const double m = static_cast<double>(p.micro_batches);
  const double rate = w.fp32 ? r.fp32_matmul_flops_per_s : r.matmul_flops_per_s;
  auto run = [&](double flops, double bytes) {
    return (rate > 0 ? flops / rate : 0) +
           (r.hbm_bytes_per_s > 0 ? bytes / r.hbm_bytes_per_s : 0);
  };
  double fwd = run(w.fwd_flops, w.fwd_bytes);
  double bwd = 2 * fwd;
  t.compute_s = m * (fwd + bwd + 3 * w.fwd_ops * r.op_overhead_s);
  t.recompute_s = m * run(w.recompute_flops, w.recompute_bytes);
  if (w.timed_compute_s >= 0) {  // the step-time model's figures (StepWork::timed_compute_s)
    t.compute_s = w.timed_compute_s;
    t.recompute_s = std::max(0.0, w.timed_recompute_s);
    fwd = m > 0 ? t.compute_s / (3 * m) : 0;  // one micro-batch: forward 1/3, backward 2/3 (the roofline's split)
    bwd = 2 * fwd;
  }

  // Which link a group spans: TP innermost, then DP, then PP (Megatron's rank order).
  const int64_t node = std::max<int64_t>(1, r.gpus_per_node);
  auto link = [&](int64_t stride_times_size) {
    return stride_times_size <= node ? r.intra_node_bytes_per_s : r.inter_node_bytes_per_s;
  };
  const double psi = static_cast<double>(w.params);
  const double grad_bytes = psi * static_cast<double>(w.grad_bytes_per);
  const double param_bytes = psi * static_cast<double>(w.param_bytes_per);
  const double dp_link = link(p.tp * p.dp);
  double dp_comm = 0;
  switch (p.dp_kind) {
    case DataParallel::none: break;
    case DataParallel::ddp: case DataParallel::zero1: case DataParallel::zero2:
      dp_comm = ring_s(grad_bytes, p.dp, 2, dp_link);
      break;
    case DataParallel::megatron: dp_comm = ring_s(psi * 4, p.dp, 2, dp_link); break;
    case DataParallel::zero3: case DataParallel::fsdp2:
      // gathers repeat per micro-batch; the gradient reduce-scatter also runs per micro-batch
      dp_comm = m * ring_s(param_bytes, p.dp, 2, dp_link) + m * ring_s(grad_bytes, p.dp, 1, dp_link);
      break;
  }
  t.dp_comm_s = std::max(0.0, dp_comm - (p.dp_kind == DataParallel::zero3 || p.dp_kind == DataParallel::fsdp2
                                             ? t.compute_s : m * bwd));
  const double act = static_cast<double>(w.boundary_bytes);
  t.tp_comm_s = m * static_cast<double>(w.layers) * ring_s(act, p.tp, 4, link(p.tp));
  if (p.pp > 1) {
    t.pp_comm_s = m * 2 * act / link(p.tp * p.dp * p.pp);
    t.bubble_s = static_cast<double>(p.pp - 1) * (fwd + bwd + t.recompute_s / m);
  }

  // Optimizer: local shard after DP sharding of states.
  const bool sharded = p.dp_kind != DataParallel::none && p.dp_kind != DataParallel::ddp;
  const double n = sharded ? static_cast<double>(p.dp) : 1.0;
  const double state = static_cast<double>(w.optimizer_state_bytes);
  if (p.offload != Offload::none) {
    t.optimizer_s = psi / n / r.cpu_adam_params_per_s;
    // fp32-or-not gradients down, updated 16/32-bit parameters up
    t.offload_s = r.host_link_bytes_per_s > 0 ? (grad_bytes + param_bytes) / n / r.host_link_bytes_per_s : 0;
    if (p.offload == Offload::optimizer_and_params && r.host_link_bytes_per_s > 0)
      t.offload_s += m * 2 * param_bytes / n / r.host_link_bytes_per_s;  // parameters fetched fwd and bwd
  } else {
    t.optimizer_s = r.hbm_bytes_per_s > 0 ? (2 * (param_bytes + state) + grad_bytes) / n / r.hbm_bytes_per_s : 0;
  }
  t.total_s = t.compute_s + t.recompute_s + t.optimizer_s + t.dp_comm_s + t.tp_comm_s + t.pp_comm_s + t.bubble_s +
              t.offload_s;
  return t;
}

StepTime single_gpu_step_time(const Graph& g, const RunConfig& cfg, int64_t trainable_params,
                              int64_t optimizer_state_bytes, const DeviceRates& r) {
  const GraphCost c = graph_cost(g);
  StepWork w;
  w.par.micro_batches = cfg.grad_accum_steps;
  w.fp32 = cfg.precision == Precision::fp32;
  w.fwd_flops = c.fwd_flops;
  w.fwd_bytes = c.fwd_bytes;
  w.fwd_ops = c.ops;
  w.recompute_flops = c.recompute_flops;
  w.recompute_bytes = c.recompute_bytes;
  w.layers = c.layers;
  w.params = trainable_params;
  w.param_bytes_per = w.grad_bytes_per = cfg.precision == Precision::bf16 || cfg.precision == Precision::fp16 ? 2 : 4;
  w.optimizer_state_bytes = optimizer_state_bytes;
  return step_time(w, r);
}

namespace {
// The GPU columns of `f` scaled to the GPU of `r` (DeviceRates::time_scale_*).
void scale_to(timing::Features& g, const DeviceRates& r, bool fp32) {
  const double flops = fp32 ? r.time_scale_fp32_matmul : r.time_scale_matmul;
  for (int j : {timing::kGemm, timing::kGemmF32, timing::kAttn, timing::kConv}) g[static_cast<size_t>(j)] *= flops;
  // depthwise convolutions, batch / layer norm and reductions are memory-bound kernels (step_time.h), the optimizer
  // streams its tensors; pooling is per element (index-bound), left as measured like the host columns
  for (int j : {timing::kConvDw, timing::kBn, timing::kMem, timing::kMemBwd, timing::kOpt, timing::kNorm})
    g[static_cast<size_t>(j)] *= r.time_scale_hbm;
}
}  // namespace

timing::TimeSplit timed_on(const timing::Features& f, const DeviceRates& r, bool fp32) {
  timing::Features g = f;
  scale_to(g, r, fp32);
  return timing::predict(g, timing::h200_coefficients());
}

timing::Timeline scaled_timeline(timing::Timeline t, const DeviceRates& r, bool fp32) {
  for (timing::Features& chunk : t) scale_to(chunk, r, fp32);
  return t;
}

double timed_single_gpu_step_s(const Graph& g, const RunConfig& cfg, const DeviceRates& r) {
  if (cfg.mode != Mode::training) throw InputError("mode", "inference", "the timed single-GPU step is for training runs");
  const bool fp32 = cfg.precision == Precision::fp32;
  const timing::Timeline t = timing::training_timeline(g, cfg, op_rates_of(r));
  const timing::Coefficients& c = timing::h200_coefficients();
  return timing::predict(timing::critical_path(scaled_timeline(t, r, fp32), c), c).total_s;
}

}  // namespace memplan::plan
