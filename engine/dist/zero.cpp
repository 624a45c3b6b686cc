// DeepSpeed ZeRO as semantics (deepspeed/runtime/zero/stage_1_and_2.py, stage3.py; DeepSpeed is not on the GPU
// image, so nothing here is measured: derived from the source's defaults). One rank of dp:
//
//   zero1  measured form: torch's ZeroRedundancyOptimizer over DDP (ddp.cpp, make_zero1_torch).
//   zero2  the model is built on the device, then its 16-bit (or fp32) parameters are moved into one flat buffer
//          per group (flatten_dense_tensors_aligned, padded to a multiple of 2 x dp elements: the parameters
//          become views, the originals are freed); a clone of this rank's partition in fp32
//          (single_partition_of_fp32_groups) is what the optimizer steps, so its state is the partition's.
//          Backward (contiguous_gradients=True, overlap_comm=False, reduce_bucket_size 5e8 elements): the first
//          gradient of a backward allocates the ipg bucket (min(5e8, parameters) elements, gradient dtype); each
//          .grad is copied into it and released (the param's .grad becomes a view); a full bucket is reduced and
//          this rank's slice copied into grads_in_partition (partition elements, gradient dtype, allocated at the
//          first reduction and kept); the bucket is dropped at the end of backward. step(): the partition's
//          gradient cast to fp32 (a partition-sized fp32 tensor) for the step, freed after it; the updated fp32
//          partition is copied back into the flat 16-bit buffer and all-gathered in place.
//   zero3  FSDP2's mechanics (fsdp2.cpp, make_zero3_semantics) with DeepSpeed's differences: flat partitions of
//          ceil(numel / dp) elements per parameter rather than dim-0 row chunks; parameters below
//          stage3_param_persistence_threshold (1e5 elements) stay whole on every rank; a gather allocates one flat
//          buffer the parameters view (no copy-out into per-parameter storages, no all-gather state kept for
//          overlap); gradients reduce-scatter into one flat partition buffer of the parameters' dtype kept for
//          the run (the staging buffer freed at once); a flat fp32 master partition with the optimizer's state,
//          and a partition-sized fp32 gradient copy during step() when parameters are 16-bit. Left as FSDP2
//          does it: the prefetch (one layer ahead, where DeepSpeed fills stage3_prefetch_bucket_size 5e7
//          elements) and release after each layer (DeepSpeed may keep parameters whose reuse distance is below
//          stage3_max_reuse_distance).
// Offload (ZeRO-Offload): optimizer state and the fp32 partition on the host (no GPU optimizer state).
#include <algorithm>

#include "engine/checked.h"
#include "engine/dist/dist.h"
#include "engine/errors.h"

namespace memplan::dist {
namespace {

constexpr int64_t kReduceBucketElems = 500'000'000;  // reduce_bucket_size default

class Zero2 final : public Strategy {
 public:
  Zero2(const RunConfig& cfg, const Graph& g) : cfg_(cfg.distributed) {
    world_ = std::max<int64_t>(1, cfg_.dp());
    for (const auto& p : index_params(g)) {
      if (!p.trainable) continue;
      trainable_.push_back(p);
      numel_ = checked_add(numel_, p.numel, "parameter elements");
      dtype_ = p.dtype;
    }
    const int64_t align = 2 * world_;
    padded_ = (numel_ + align - 1) / align * align;
    partition_ = padded_ / world_;
    report_.full_param_bytes = checked_mul(numel_, dtype_bytes(dtype_), "bytes");
    report_.sharded_param_bytes = report_.full_param_bytes;
    report_.bucket_bytes = checked_mul(std::min(kReduceBucketElems, numel_), dtype_bytes(dtype_), "bytes");
    report_.optimizer_param_numel = partition_;
    offload_ = cfg_.offload != DistOffload::none;
    if (offload_) report_.host_bytes = checked_mul(partition_, 4, "bytes");
  }

  void after_build(ReplayState& s) override {
    const int32_t flat = s.mem.alloc(checked_mul(padded_, dtype_bytes(dtype_), "bytes"), Row::weights);
    for (const auto& p : trainable_) {
      int32_t& b = s.param_block[static_cast<size_t>(p.ordinal)];
      s.mem.free(b);
      b = flat;
    }
    s.optimizer_params.clear();
    if (offload_) return;
    s.mem.alloc(checked_mul(partition_, 4, "bytes"), Row::optimizer_state);  // fp32 partition (master)
    s.optimizer_params.push_back({{partition_}, DType::f32, partition_, checked_mul(partition_, 4, "bytes")});
  }

  void grad_ready(ReplayState& s, int32_t ordinal) override {
    int32_t& g = s.param_grad[static_cast<size_t>(ordinal)];
    if (g < 0) return;
    if (ipg_ < 0) ipg_ = s.mem.alloc(report_.bucket_bytes, Row::comm_buffers);
    int64_t n = 0;
    for (const auto& p : trainable_)
      if (p.ordinal == ordinal) n = p.numel;
    s.mem.free(g);  // copied into the bucket; .grad is a view of it now
    g = -1;
    filled_ += n;
    if (filled_ >= std::min(kReduceBucketElems, numel_)) reduce(s);
  }

  void post_backward(ReplayState& s, int32_t unit) override {
    if (unit != kRoot) return;
    if (filled_ > 0) reduce(s);
    if (ipg_ >= 0) s.mem.free(ipg_);
    ipg_ = -1;
  }

  void before_optimizer(ReplayState& s) override {
    if (offload_) return;
    fp32_grad_ = s.mem.alloc(checked_mul(partition_, 4, "bytes"), Row::gradients);
  }
  void after_optimizer(ReplayState& s) override {
    if (fp32_grad_ >= 0) s.mem.free(fp32_grad_);
    fp32_grad_ = -1;
  }

 private:
  void reduce(ReplayState& s) {
    if (partition_grads_ < 0) partition_grads_ = s.mem.alloc(checked_mul(partition_, dtype_bytes(dtype_), "bytes"), Row::gradients);
    filled_ = 0;
  }

  DistributedConfig cfg_;
  int64_t world_ = 1, numel_ = 0, padded_ = 0, partition_ = 0, filled_ = 0;
  DType dtype_ = DType::f32;
  bool offload_ = false;
  std::vector<ParamInfo> trainable_;
  int32_t ipg_ = -1, partition_grads_ = -1, fp32_grad_ = -1;
};

}  // namespace

std::unique_ptr<Strategy> make_zero(const RunConfig& cfg, const Graph& g, DType orig_dtype) {
  switch (cfg.distributed.strategy) {
    case DistStrategy::zero1: return make_zero1_torch(cfg, g);
    case DistStrategy::zero2: return std::make_unique<Zero2>(cfg, g);
    default: return make_zero3_semantics(cfg, g, orig_dtype);
  }
}

}  // namespace memplan::dist
