// Step-time model used to rank configurations that fit. It is a roofline sum, not a simulator:
//
//   per op      matmul-like ops (linear, matmul, bmm, sdpa) cost FLOPs at the achieved GEMM rate; every other
//               op costs the bytes it reads and writes at HBM bandwidth (max of the two per op);
//   backward    2 x the forward cost of each op; recompute: the forward of checkpointed layers once more;
//   overhead    op_overhead_s per kernel (3 x the forward's kernels per micro-batch): what makes many small
//               micro-batches slower than few large ones;
//   optimizer   bytes of parameters, gradients and state read and written once at HBM bandwidth, or on the
//               CPU (offload) at cpu_adam_params_per_s plus gradient / parameter transfers over the host link;
//   comm        ring volumes over the link a group spans (NVLink inside a node, the network across nodes):
//               DP all-reduce 2(n-1)/n x gradient bytes (ddp / zero1 / zero2 / megatron), ZeRO-3 / FSDP2
//               3(n-1)/n x parameter bytes (gather forward, gather backward, reduce-scatter); TP 4 all-reduces
//               (or all-gather + reduce-scatter pairs with SP, the same volume) of [b, s, h] per layer and
//               micro-batch; PP one [b, s, h] send forward and one backward per micro-batch;
//   overlap     DP communication hides behind backward compute (only the excess is exposed); TP and PP
//               communication is exposed; the 1F1B bubble adds (P - 1) micro-batch slots.
// All FLOP and byte inputs are per GPU.
// plan and fit replace the per-op, backward, recompute and overhead terms by the step-time model fitted on the
// H200 (engine/time/; StepWork::timed_compute_s, timed_single_gpu_step_s): the roofline above was ~25 % low on
// transformers and ~3x low on convolution nets; communication, bubble, offload and the optimizer stay here.
#pragma once
#include <cstdint>

#include "engine/arch/spec.h"
#include "engine/graph.h"
#include "engine/plan/distributed.h"
#include "engine/run_config.h"
#include "engine/time/step_time.h"

namespace memplan::plan {

// FLOPs and memory traffic of one forward pass over a Graph, split into the part inside layers (per layer,
// averaged) and outside (embedding, head, loss).
struct GraphCost {
  double fwd_flops = 0, fwd_bytes = 0;            // whole forward (model and loss)
  double layer_flops = 0, layer_bytes = 0;        // one average layer
  double attn_core_flops = 0, attn_core_bytes = 0;  // one average layer's attention core (selective recompute)
  double recompute_flops = 0, recompute_bytes = 0;  // forward of the layers the graph checkpoints
  double ops = 0;                                  // kernels launched by the forward (views excluded)
  int64_t layers = 0;
};
// Matmul FLOPs: linear 2*numel(out)*in_features; matmul 2*numel(out)*K; sdpa 4*B*H*Sq*Sk*D, halved when causal
// is not known to be skipped (we count the full square: flash kernels skip masked tiles, so callers that
// know the mask is causal may halve it).
GraphCost graph_cost(const Graph& g);

struct DeviceRates {
  double matmul_flops_per_s = 0;      // achieved dense GEMM rate, 16-bit (AMP and pure bf16/fp16)
  double fp32_matmul_flops_per_s = 0; // achieved fp32 GEMM rate (torch default: no TF32 for matmul)
  double hbm_bytes_per_s = 0;
  double intra_node_bytes_per_s = 0;  // per GPU, one direction (NVLink, or PCIe when no NVLink)
  double inter_node_bytes_per_s = 50e9;  // per GPU, one direction: 400 Gb/s InfiniBand NDR per GPU (assumed)
  double host_link_bytes_per_s = 0;   // pinned H2D / D2H
  double cpu_adam_params_per_s = 1e9; // DeepSpeed CPUAdam per GPU process (assumed)
  int64_t gpus_per_node = 8;
  double op_overhead_s = 5e-6;        // launch + eager-mode dispatch per kernel (assumed); forward + backward
                                      // launch about 3x the forward's kernels per micro-batch
  // The step-time model (engine/time/) holds H200 measurements: on a GPU without its own (op_rates below) its
  // seconds are the H200's times these ratios (H200 rate / this GPU's; 1 on the H200, cli/plan_common.cpp sets them from the two GPUs'
  // DeviceRates): GEMM, attention and convolution columns by the dense GEMM rate (16-bit, or fp32 for fp32
  // runs), memory-bound columns (elementwise, batch norm) by HBM bandwidth; CPU dispatch, kernel launches and
  // the per-step / per-micro-batch constants are left as measured (a different host is not modelled).
  double time_scale_matmul = 1, time_scale_fp32_matmul = 1, time_scale_hbm = 1;
  // The step-time model's rates measured on this GPU (engine/time/step_time.h measured_gpu: an H100 SXM), costed
  // as they are (the time_scale_* ratios stay 1); null: the H200's, scaled by those ratios.
  const timing::OpRates* op_rates = nullptr;
};
// The step-time rates a DeviceRates costs with: its own measured ones, else the H200's.
inline const timing::OpRates& op_rates_of(const DeviceRates& r) {
  return r.op_rates != nullptr ? *r.op_rates : timing::h200_op_rates();
}

// Seconds of the step-time model (engine/time/step_time.h, H200 coefficients) for features measured at the
// H200's rates, scaled to the GPU of `r` as described at DeviceRates::time_scale_*.
timing::TimeSplit timed_on(const timing::Features& f, const DeviceRates& r, bool fp32);
// A step's timeline with every chunk's GPU columns scaled to the GPU of `r` (as timed_on scales them). Its
// critical path is the step on that GPU: which chunks the host or the GPU bounds depends on the GPU, so a path
// taken on the H200 and scaled afterwards is wrong wherever the two differ (a step host-bound on the H200 whose
// GPU work, six times slower on another GPU, then bounds it: Llama-2-7B LoRA b1 s2048 on an RTX 4090 read 281 ms,
// its critical path there 1.0 s).
timing::Timeline scaled_timeline(timing::Timeline t, const DeviceRates& r, bool fp32);

struct StepWork {
  ParallelConfig par;
  bool fp32 = false;                          // fp32 compute (the fp32 GEMM rate applies)
  double fwd_flops = 0, fwd_bytes = 0;        // one micro-batch on this GPU's stage
  double fwd_ops = 0;                         // kernels of that forward
  double recompute_flops = 0, recompute_bytes = 0;  // one micro-batch
  int64_t layers = 0;                         // layers on this GPU's stage
  int64_t boundary_bytes = 0;                 // [b, s, h] activation at a layer / stage boundary
  int64_t params = 0;                         // local shard params
  int64_t param_bytes_per = 4, grad_bytes_per = 4;
  int64_t optimizer_state_bytes = 0;          // local shard, before DP sharding
  // The step-time model's forward + backward (+ recompute) seconds of all micro-batches on this GPU, the
  // optimizer excluded (engine/time/, via timed_on); when >= 0 they replace the roofline's compute_s and
  // recompute_s (the flops / bytes / ops above are then unused). The backward share that DP communication
  // hides behind is taken as 2/3 of compute_s (the roofline's split), the 1F1B bubble slot as one
  // micro-batch's compute + recompute.
  double timed_compute_s = -1, timed_recompute_s = -1;
};

struct StepTime {
  double compute_s = 0, recompute_s = 0, optimizer_s = 0, dp_comm_s = 0, tp_comm_s = 0, pp_comm_s = 0,
         bubble_s = 0, offload_s = 0;
  double total_s = 0;
};

StepTime step_time(const StepWork& w, const DeviceRates& r);

// One GPU, no wrapper: the graph of `cfg` (its checkpointed layers recomputed) with `cfg`'s accumulation
// (the roofline; `memplan fit` uses timed_single_gpu_step_s for training runs).
StepTime single_gpu_step_time(const Graph& g, const RunConfig& cfg, int64_t trainable_params,
                              int64_t optimizer_state_bytes, const DeviceRates& r);

// One GPU, training: the step-time model's whole step (G micro-batches, recompute, optimizer, constants) of
// `g` = build_graph(spec, cfg), scaled to `r`'s GPU; on the H200 (scales 1) exactly
// timing::case_time(spec, cfg).step_ms / 1e3.
double timed_single_gpu_step_s(const Graph& g, const RunConfig& cfg, const DeviceRates& r);

}  // namespace memplan::plan
