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
#pragma once
#include <cstdint>

#include "engine/graph.h"
#include "engine/plan/distributed.h"
#include "engine/run_config.h"

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
};

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
};

struct StepTime {
  double compute_s = 0, recompute_s = 0, optimizer_s = 0, dp_comm_s = 0, tp_comm_s = 0, pp_comm_s = 0,
         bubble_s = 0, offload_s = 0;
  double total_s = 0;
};

StepTime step_time(const StepWork& w, const DeviceRates& r);

// One GPU, no wrapper: the graph of `cfg` (its checkpointed layers recomputed) with `cfg`'s accumulation.
StepTime single_gpu_step_time(const Graph& g, const RunConfig& cfg, int64_t trainable_params,
                              int64_t optimizer_state_bytes, const DeviceRates& r);

}  // namespace memplan::plan
