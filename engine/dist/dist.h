// One rank of a distributed training step (RunConfig::distributed): the strategy that replays the wrapper's
// own memory (engine/dist/rank_hooks.h), the per-rank figures reported next to the replay, and the NCCL memory
// outside the caching allocator.
//
// Stages (engine/estimate.cpp, when cfg.distributed.enabled()):
//   1. the graph one rank runs: tensor parallel divides heads, kv heads, intermediate and vocabulary by tp
//      (plan::local_shard); FSDP2 with MixedPrecisionPolicy(param_dtype) computes in param_dtype;
//   2. make_rank_hooks() picks the strategy (ddp.cpp, fsdp2.cpp, zero.cpp) over that graph;
//   3. the step replay runs with the hooks; the strategy's side-stream blocks are tagged on the event stream
//      (tag_streams), so the caching-allocator model keeps per-stream pools;
//   4. nccl_memory() adds the communicators' device memory, outside the allocator (derived, not measured).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/dist/rank_hooks.h"
#include "engine/dtype.h"
#include "engine/mem_event.h"
#include "engine/run_config.h"

namespace memplan::dist {

// NCCL's device memory per rank, outside the caching allocator (never in memory_allocated / reserved).
struct NcclMemory {
  int64_t communicators = 0;     // process groups this rank holds a communicator in
  int64_t channels = 0;          // per communicator
  int64_t init_bytes = 0;        // per communicator: NCCL's own device state and kernels' first launch
  int64_t buffer_bytes = 0;      // per communicator: channel x peer connection buffers of all protocols
  int64_t total_bytes = 0;
};
// `groups` x world sizes: one communicator per process group the strategy uses (dp, tp). World 1 groups open
// no peer connections.
NcclMemory nccl_memory(const std::vector<int64_t>& group_sizes);

// Per-rank figures of the replayed wrapper (Estimate::distributed).
struct RankReport {
  DistStrategy strategy = DistStrategy::none;
  int64_t world_size = 1, dp = 1, tp = 1, rank = 0, dp_rank = 0;
  int64_t units = 0;                       // FSDP2 / ZeRO-3 units (layers + root); DDP buckets
  int64_t full_param_bytes = 0;            // this rank's (TP-local) parameters, unsharded, as built
  int64_t sharded_param_bytes = 0;         // parameter storage this rank keeps between steps (padded shards)
  int64_t largest_unit_unsharded_bytes = 0;  // FSDP2 / ZeRO-3: the biggest all-gathered unit
  int64_t bucket_bytes = 0;                // DDP: gradient buckets; ZeRO-1/2: the reduce bucket
  int64_t optimizer_param_numel = 0;       // elements the optimizer keeps state for on this rank
  int64_t host_bytes = 0;                  // CPU offload: pinned / pageable host memory per rank
  NcclMemory nccl;                         // derived: NCCL's documented defaults, no multi-GPU run here
};

// A strategy: hooks plus what it reports. Side-stream blocks are recorded as (block, stream).
class Strategy : public RankHooks {
 public:
  const RankReport& report() const { return report_; }
  RankReport& report_mut() { return report_; }
  // Sets MemEvent::stream of every event of a block the strategy allocated on a side stream.
  void tag_streams(MemEventStream& events) const;

 protected:
  int32_t alloc_on(MemoryTracker& mem, int64_t bytes, Row row, int32_t stream);
  RankReport report_;
  std::vector<std::pair<int32_t, int32_t>> side_blocks_;  // (block, stream), blocks in increasing order
};

// The strategy for cfg.distributed over the graph one rank runs. `orig_dtype`: the dtype the model's parameters
// are built in (FSDP2 param_dtype may make the graph compute in another). Throws InputError naming the field
// for configurations the strategy does not model.
std::unique_ptr<Strategy> make_rank_hooks(const RunConfig& cfg, const Graph& g, DType orig_dtype);

// Parses MixedPrecisionPolicy dtypes: "bf16" / "bfloat16", "fp16" / "float16", "fp32" / "float32"; empty = none.
bool parse_mp_dtype(std::string_view s, DType& out);

// Implementations (one file each).
std::unique_ptr<Strategy> make_fsdp2(const RunConfig& cfg, const Graph& g, DType orig_dtype);
std::unique_ptr<Strategy> make_ddp(const RunConfig& cfg, const Graph& g);
// ZeRO-1 as torch runs it: ZeroRedundancyOptimizer over DDP (what the measurements use).
std::unique_ptr<Strategy> make_zero1_torch(const RunConfig& cfg, const Graph& g);
// ZeRO-3 as FSDP2's mechanics with DeepSpeed's partitions, persistence threshold and flat buffers (zero.cpp).
std::unique_ptr<Strategy> make_zero3_semantics(const RunConfig& cfg, const Graph& g, DType orig_dtype);
std::unique_ptr<Strategy> make_zero(const RunConfig& cfg, const Graph& g, DType orig_dtype);
// Tensor parallel alone (DTensor Colwise / Rowwise on a local shard): parameters and gradients as the local
// shard graph has them, nothing wrapped.
std::unique_ptr<Strategy> make_tp_only(const RunConfig& cfg, const Graph& g);

// Tensor parallel (tp.cpp): rewrites a local-shard graph built with the full vocabulary into the graph a rank
// runs: the vocabulary-row parameters cut to rank 0's ceil(V / tp) rows (the logits stay whole, as
// ColwiseParallel(output_layouts=Replicate()) gathers them), DTensor's functional collectives inserted as ops,
// the embedding's Replicate gradient and the norms' out-of-place gradient sums (tp.cpp's header lists the stages).
void tensor_parallel_rewrite(Graph& g, int64_t vocab, int64_t tp);
// Sequence parallel (tp.cpp): the sequence-sharded regions of a local-shard graph cut to ceil(S / tp) positions.
void shard_sequence(Graph& g, int64_t seq_len, int64_t hidden, int64_t tp);
// By parameter / buffer ordinal: the embedding's backward gives the parameter a gradient larger than its local
// shard, a Replicate DTensor (the vocabulary-parallel embedding's full [V, H], tp.cpp); the strategy
// redistributes it.
std::vector<bool> replicate_grad_params(const Graph& g);

// ---- helpers shared by the strategies
struct ParamInfo {
  int32_t ordinal = -1;       // parameter / buffer ordinal (ReplayState vectors)
  TensorId tensor = kNoTensor;
  int64_t numel = 0;
  int64_t dim0 = 1;           // rows FSDP2 shards (dim 0; 1 for a 0-d tensor)
  DType dtype = DType::f32;   // as the graph computes with it
  bool trainable = false;
  bool buffer = false;
  int32_t unit = kRoot;       // the layer whose op reads it first, kRoot outside every layer
};
std::vector<ParamInfo> index_params(const Graph& g);

}  // namespace memplan::dist
