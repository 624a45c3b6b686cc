// torch.nn.parallel.DistributedDataParallel (torch 2.11, C++ Reducer) on one rank. Read from
// torch/nn/parallel/distributed.py and torch/csrc/distributed/c10d/reducer.cpp / comm.cpp:
//
//   construction  _sync_module_states: broadcast_coalesced(parameters + buffers, 250 MiB) flattens the states
//                 into buckets (compute_bucket_assignment_by_size with one 250 MiB limit, per dtype), at most two
//                 flat buffers in flight; then the Reducer's buckets: with find_unused_parameters=False (default,
//                 and with static_graph) the first iteration uses a single bucket per dtype (bucket_size_limits =
//                 [sys.maxsize]), `bucket.gradients = at::empty(total elements)`.
//   backward      AccumulateGrad makes .grad as without DDP; the reducer's hook copies it into its bucket view
//                 (in place, with the 1 / world division). gradient_as_bucket_view=True: .grad then becomes the
//                 bucket view, the autograd gradient is freed. All-reduces run in place on the buckets.
//   rebuild       Reducer::rebuild_buckets (should_rebuild_buckets: static_graph or !find_unused_parameters) at
//                 the forward after the first backward, with static_graph after the second: the buffer is freed
//                 and one buffer per rebuilt bucket allocated, in the order gradients became ready, the first
//                 bucket closing at 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES), the next at bucket_cap_mb (a bucket
//                 closes once it reaches its limit, the parameter crossing it included). Every whole-run recording
//                 (torch 2.11, the harness's comm hook returning the bucket's buffer) shows it, with and without
//                 gradient_as_bucket_view (ll4 bf16: 610 MiB freed, then 125 / 44 / 30 / 38 / 44 / 46 / 44 ... MiB
//                 buckets, as assign_buckets() gives; static_graph: the same at the third forward). The new
//                 buckets are cut, best fit, from blocks the first step left cached, and the old buffer's segment
//                 is left to what the second step allocates: reserved moves either way (ms4 bf16 measured / without
//                 the rebuild / with it: DDP bk10 4630 / 4878 / 4622 MiB, ZeRO-1 w16 3670 / 3414 / 3670; no tuning
//                 case's peaks change).
//   forward       broadcast_buffers=True: every forward flattens the module's buffers (broadcast_coalesced).
// ZeRO-1 as measured here (torch.distributed.optim.ZeroRedundancyOptimizer over DDP, the harness's zero1): the
// same DDP, with the optimizer built over this rank's partition only. _partition_parameters sorts the parameters
// by numel (descending, stable) and gives each to the rank with the fewest elements so far (the first such rank);
// the local optimizer sees its parameters in that order. After step() every rank's parameters are broadcast in
// place (parameters_as_bucket_view=False: no buffers).
// Memory per rank is therefore the full model, its .grad (unless bucket views) and the buckets: gradient bytes
// twice by default. static_graph changes when all-reduces run, not what is allocated.
#include <algorithm>
#include <deque>
#include <map>

#include "engine/checked.h"
#include "engine/dist/dist.h"

namespace memplan::dist {
namespace {

constexpr int64_t kFirstBucketBytes = int64_t{1} << 20;      // dist._DEFAULT_FIRST_BUCKET_BYTES
constexpr int64_t kBroadcastBucketBytes = int64_t{250} << 20;  // DDP.broadcast_bucket_size

struct Tensor1 {
  int32_t ordinal;
  DType dtype;
  int64_t bytes;
};

// compute_bucket_assignment_by_size: per dtype, a bucket closes once its size reaches the current limit; the
// limits advance and the last repeats. Closed buckets in closing order, then the open ones (by dtype).
std::vector<std::vector<Tensor1>> assign_buckets(const std::vector<Tensor1>& tensors, const std::vector<int64_t>& limits) {
  std::vector<std::vector<Tensor1>> out;
  std::map<DType, std::pair<std::vector<Tensor1>, int64_t>> open;  // bucket, its bytes
  std::map<DType, size_t> limit_index;
  for (const Tensor1& t : tensors) {
    auto& [bucket, bytes] = open[t.dtype];
    size_t& li = limit_index[t.dtype];
    bucket.push_back(t);
    bytes = checked_add(bytes, t.bytes, "bucket bytes");
    if (bytes >= limits[li]) {
      out.push_back(std::move(bucket));
      bucket.clear();
      bytes = 0;
      if (li + 1 < limits.size()) ++li;
    }
  }
  for (auto& [dt, b] : open)
    if (!b.first.empty()) out.push_back(std::move(b.first));
  return out;
}

int64_t bucket_bytes(const std::vector<Tensor1>& b) {
  int64_t n = 0;
  for (const auto& t : b) n = checked_add(n, t.bytes, "bucket bytes");
  return n;
}

class Ddp final : public Strategy {
 public:
  Ddp(const RunConfig& cfg, const Graph& g, bool zero1) : cfg_(cfg.distributed), zero1_(zero1) {
    for (const auto& p : index_params(g)) {
      if (p.trainable) {
        const auto& ti = g.tensors[static_cast<size_t>(p.tensor)];
        trainable_params_.push_back({ti.shape, ti.dtype, p.numel, checked_mul(p.numel, dtype_bytes(ti.dtype), "bytes")});
      }
      const int64_t bytes = checked_mul(p.numel, dtype_bytes(p.dtype), "parameter bytes");
      states_.push_back({p.ordinal, p.dtype, bytes});
      if (p.buffer) buffers_.push_back({p.ordinal, p.dtype, bytes});
      if (p.trainable) {
        trainable_.push_back({p.ordinal, p.dtype, bytes});
        report_.full_param_bytes = checked_add(report_.full_param_bytes, bytes, "bytes");
      } else if (!p.buffer) {
        report_.full_param_bytes = checked_add(report_.full_param_bytes, bytes, "bytes");
      }
    }
    report_.sharded_param_bytes = report_.full_param_bytes;
    cap_bytes_ = checked_mul(cfg_.bucket_cap_mb, int64_t{1} << 20, "distributed.bucket_cap_mb");
  }

  void after_build(ReplayState& s) override {
    broadcast_coalesced(s, states_);
    // The Reducer: one bucket per dtype for the first iteration.
    allocate_buckets(s, assign_buckets(trainable_, {INT64_MAX}));
    if (zero1_) s.optimizer_params = zero1_partition();
    for (const auto& p : s.optimizer_params) report_.optimizer_param_numel += p.numel;
  }

  void pre_forward(ReplayState& s, int32_t unit) override {
    if (unit != kRoot) return;
    if (!rebuilt_ && backwards_ >= (cfg_.static_graph ? 2 : 1) && !ready_order_.empty()) {  // Reducer::rebuild_buckets
      rebuilt_ = true;
      for (int32_t b : bucket_blocks_) s.mem.free(b);
      bucket_blocks_.clear();
      std::vector<Tensor1> order;
      for (int32_t o : ready_order_)
        for (const auto& t : trainable_)
          if (t.ordinal == o) order.push_back(t);
      allocate_buckets(s, assign_buckets(order, {kFirstBucketBytes, cap_bytes_}));
    }
    if (!buffers_.empty()) broadcast_coalesced(s, buffers_);  // broadcast_buffers=True
  }

  void post_backward(ReplayState&, int32_t unit) override {
    if (unit == kRoot) ++backwards_;
  }

  void grad_ready(ReplayState& s, int32_t ordinal) override {
    if (!rebuilt_ && std::find(ready_order_.begin(), ready_order_.end(), ordinal) == ready_order_.end())
      ready_order_.push_back(ordinal);
    if (cfg_.gradient_as_bucket_view) {  // grad = bucket_view: the autograd gradient is released
      int32_t& g = s.param_grad[static_cast<size_t>(ordinal)];
      if (g >= 0) s.mem.free(g);
      g = -1;
    }
  }

 private:
  std::vector<TrainableParam> zero1_partition() const {
    const int64_t world = std::max<int64_t>(1, cfg_.dp());
    const int64_t rank = cfg_.rank / std::max<int64_t>(1, cfg_.world_size / world);
    std::vector<size_t> order(trainable_params_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return trainable_params_[a].numel > trainable_params_[b].numel; });
    std::vector<int64_t> sizes(static_cast<size_t>(world), 0);
    std::vector<TrainableParam> mine;
    for (size_t i : order) {
      const auto r = static_cast<size_t>(std::min_element(sizes.begin(), sizes.end()) - sizes.begin());
      sizes[r] = checked_add(sizes[r], trainable_params_[i].numel, "partition elements");
      if (static_cast<int64_t>(r) == rank) mine.push_back(trainable_params_[i]);
    }
    return mine;
  }

  void allocate_buckets(ReplayState& s, const std::vector<std::vector<Tensor1>>& buckets) {
    report_.units = static_cast<int64_t>(buckets.size());
    report_.bucket_bytes = 0;
    for (const auto& b : buckets) {
      const int64_t n = bucket_bytes(b);
      bucket_blocks_.push_back(s.mem.alloc(n, Row::comm_buffers));
      report_.bucket_bytes = checked_add(report_.bucket_bytes, n, "bucket bytes");
    }
  }

  // c10d::broadcast_coalesced: flat buffers per 250 MiB bucket, two in flight.
  void broadcast_coalesced(ReplayState& s, const std::vector<Tensor1>& tensors) {
    std::deque<int32_t> in_flight;
    for (const auto& b : assign_buckets(tensors, {kBroadcastBucketBytes})) {
      if (in_flight.size() >= 2) {
        s.mem.free(in_flight.front());
        in_flight.pop_front();
      }
      in_flight.push_back(s.mem.alloc(bucket_bytes(b), Row::comm_buffers));
    }
    for (int32_t b : in_flight) s.mem.free(b);
  }

  DistributedConfig cfg_;
  bool zero1_ = false;
  std::vector<TrainableParam> trainable_params_;  // ordinal order, as optimizer.step() would see them
  int64_t cap_bytes_ = 0;
  std::vector<Tensor1> states_, buffers_, trainable_;
  std::vector<int32_t> bucket_blocks_;
  std::vector<int32_t> ready_order_;  // trainable ordinals in first-backward ready order
  bool rebuilt_ = false;
  int32_t backwards_ = 0;  // completed backward passes
};

}  // namespace

std::unique_ptr<Strategy> make_ddp(const RunConfig& cfg, const Graph& g) { return std::make_unique<Ddp>(cfg, g, false); }
std::unique_ptr<Strategy> make_zero1_torch(const RunConfig& cfg, const Graph& g) { return std::make_unique<Ddp>(cfg, g, true); }

}  // namespace memplan::dist
