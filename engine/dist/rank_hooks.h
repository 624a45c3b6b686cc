// The per-rank strategy interface: callbacks the step replay (engine/step_replay.cpp) makes at the points where a
// distributed wrapper (DDP, FSDP2, ZeRO) allocates or frees memory of its own. A strategy emits those allocations
// on the replay's MemoryTracker, on integer time between the replay's own events, and tags the blocks it puts on
// a side stream (collectives and their staging buffers) so the caching-allocator model keeps them in that
// stream's pools.
//
// Call order within one training step (one micro-batch shown; units are the Graph's layers, kRoot the model):
//   after_build                                  once, after the full model exists (build temps freed)
//   pre_forward(kRoot)
//     pre_forward(l) .. ops of l .. post_forward(l)         for each layer in order
//   post_forward(kRoot)                          after the last op (HF models compute the loss in forward)
//   pre_backward(kRoot)                          after the loss gradient exists
//     pre_backward(l) [recompute of l] .. backward ops of l .. post_backward(l)   layers in reverse
//     grad_ready(ordinal)                        whenever AccumulateGrad sets a parameter's .grad
//   post_backward(kRoot)                         the root's final callback, before the graph is freed
//   before_optimizer, optimizer.step(), after_optimizer, zero_grad (strategy first, then the replay's .grad)
//
// Contract: a strategy frees only blocks it allocated, or parameter / .grad blocks it takes over from ReplayState
// (it then sets the ReplayState entry to -1 or to its own block). The replay never frees parameter blocks, so a
// strategy may free the full parameters it shards.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/graph.h"
#include "engine/memory_tracker.h"
#include "engine/optimizer_model.h"

namespace memplan::dist {

constexpr int32_t kRoot = -1;

// CUDA streams of one rank (MemEvent::stream). Values are labels; only their distinctness matters.
enum Stream : int32_t {
  kDefaultStream = 0,
  kAllGatherCopyInStream = 1,  // FSDP2 all_gather_copy_in_stream (DeepSpeed ZeRO-3: its allgather stream)
  kAllGatherStream = 2,        // FSDP2 all_gather_stream
  kReduceScatterStream = 3,    // FSDP2 reduce_scatter_stream (DeepSpeed: reduction stream)
};

// What the replay lends a strategy at each callback.
struct ReplayState {
  MemoryTracker& mem;
  const Graph& g;
  std::vector<int32_t>& param_block;   // by parameter / buffer ordinal: the block built for it
  std::vector<int32_t>& param_grad;    // by ordinal: the block of .grad, -1 while None
  std::vector<TrainableParam>& optimizer_params;  // what optimizer.step() allocates state for
  int32_t step = 0;                    // 1-based training step (0 at build)
  int32_t micro_batch = 0;
};

class RankHooks {
 public:
  virtual ~RankHooks() = default;
  // Bytes the replay allocates for a parameter / buffer when the model is built (before after_build): the
  // graph's bytes unless the model is built in another dtype than the graph computes in (FSDP2 mixed precision).
  virtual int64_t built_bytes(int32_t /*ordinal*/, const TensorInfo& t) const { return t.bytes; }
  // False: the model is built on the meta device and materialised by the strategy (FSDP2's to_empty recipe), so
  // construction's own allocations (Graph::build_persistent_bytes, build_temp_bytes) never reach the GPU.
  virtual bool builds_on_device() const { return true; }
  virtual void after_build(ReplayState&) {}
  virtual void pre_forward(ReplayState&, int32_t /*unit*/) {}
  virtual void post_forward(ReplayState&, int32_t /*unit*/) {}
  virtual void pre_backward(ReplayState&, int32_t /*unit*/) {}
  virtual void post_backward(ReplayState&, int32_t /*unit*/) {}
  virtual void grad_ready(ReplayState&, int32_t /*ordinal*/) {}
  virtual void before_optimizer(ReplayState&) {}
  virtual void after_optimizer(ReplayState&) {}
  virtual void zero_grad(ReplayState&) {}
};

}  // namespace memplan::dist
