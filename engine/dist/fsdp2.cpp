// FSDP2 (torch.distributed.fsdp.fully_shard, torch 2.11) on one rank: fully_shard(layer) for every layer of the
// Graph, then fully_shard(model) for the root (what no layer reads: embeddings, final norm, an untied head).
// Read from torch/distributed/fsdp/_fully_shard/ (_fsdp_param.py, _fsdp_collectives.py, _fsdp_param_group.py,
// _fsdp_state.py). W = the shard group's size (dp), dim-0 sharding, rank r:
//
//   construction  the recipe the measurements use (calibrate/dist_harness.py, torchtitan's): the model is built on
//                 the meta device, fully_shard per layer and on the root, then to_empty(device="cuda") allocates
//                 each parameter's local shard (this rank's rows of c = ceil(dim0 / W), in module order) and the
//                 buffers; no full replica ever exists. At the first forward, lazy_init's reset_sharded_param
//                 re-pads a shard shorter than c rows (new_zeros(c rows), copy, the short one freed): never on
//                 rank 0. CPU offload: the shards live on the host.
//   unshard       on the all_gather_copy_in stream: with MixedPrecisionPolicy.param_dtype, one flat copy-in
//                 buffer (sum of the shards, param dtype; foreach_copy); all_gather_output = empty(W x sum of
//                 the padded shards) with the input a narrow view of it; the copy-in buffer is dropped (`del
//                 param_all_gather_inputs`). CPU offload: each shard is copied to the device (then cast).
//   wait          on the default stream: in forward, the previous group's all-gather output (kept in
//                 comm_ctx.all_gather_state to overlap the copy-out) is freed first; each parameter's unsharded
//                 storage (W x padded shard elements) is resized in; the all-gather output is then kept as the
//                 new all_gather_state (forward) or freed (backward, or prefetched).
//   reshard       post-forward (layers and the root: the argument is passed explicitly) and post-backward: the
//                 unsharded storages resize_(0) in parameter order. reshard_after_forward=K: each parameter's
//                 1/K slice of the unsharded storage is cloned first (freed after the next copy-out).
//   backward      the root's pre-backward prefetches the last layer; each layer's pre-backward copies out its
//                 own and prefetches the one before (post_forward_order); post-backward: reshard, free the
//                 previous reduce-scatter input (comm_ctx.reduce_scatter_state), allocate the reduce-scatter
//                 input (default stream, sum of W x c rows, reduce dtype), free the unsharded gradients (chunk_cat
//                 copied them), allocate the reduce output (reduce-scatter stream, sum of c rows) which the
//                 sharded .grad of every parameter of the group views; a reduce dtype other than the parameters'
//                 dtype is cast to a new tensor on that stream. A second micro-batch adds into .grad and frees
//                 its reduce output. The root's group reduces in the final callback, which also drops the last
//                 reduce-scatter input.
//   optimizer     state for the sharded parameters (this rank's rows, the parameters' dtype); zero_grad frees
//                 each group's reduce output.
// The fake process group completes every collective at once, so a free is a free; with NCCL the allocator
// would see the same frees (FSDP2 keeps references instead of record_stream), only later in wall time.
#include <algorithm>

#include "engine/checked.h"
#include "engine/dist/dist.h"
#include "engine/errors.h"

namespace memplan::dist {
namespace {

// DeepSpeed stage3_param_persistence_threshold default (1e5 elements): smaller parameters stay whole on every rank.
constexpr int64_t kZero3PersistenceThreshold = 100'000;
constexpr int32_t kNone = -1;      // no unshard pending
constexpr int32_t kNoBuffer = -2;  // an unshard pending that allocated nothing (a shard group of one)

enum class State : uint8_t { sharded, sharded_post_forward, unsharded };
enum class Training : uint8_t { idle, forward, pre_backward, post_backward };

struct FParam {
  ParamInfo info;
  int64_t rows_per_shard = 0;   // c = ceil(dim0 / W)
  int64_t row_numel = 0;        // numel / dim0
  int64_t padded_shard = 0;     // c x row elements (every rank's storage)
  int64_t rank_numel = 0;       // this rank's rows x row elements (its sharded_size)
  int32_t unsharded = -1;       // block of the unsharded storage
  int32_t post_forward = -1;    // reshard_after_forward=K: the cloned 1/K slice
  bool persistent = false;      // ZeRO-3: below stage3_param_persistence_threshold, never partitioned
};

struct Group {
  int32_t unit = kRoot;
  std::vector<size_t> params;   // indices into Fsdp2::params_, module registration (ordinal) order
  bool reshard_after_forward = true;
  State state = State::sharded;
  Training training = Training::idle;
  int32_t pending_all_gather = -1;  // all_gather_output of an unshard not yet waited for
  int32_t sharded_grad = -1;        // the reduce output the sharded .grad views
  int32_t gathered = -1;            // ZeRO-3: the flat all-gather buffer the parameters are views of
  std::vector<int32_t> post_forward_indices;
};

class Fsdp2 final : public Strategy {
 public:
  Fsdp2(const RunConfig& cfg, const Graph& g, DType orig_dtype, bool zero3)
      : cfg_(cfg.distributed), orig_(orig_dtype), zero3_(zero3) {
    world_ = cfg_.dp();
    rank_ = cfg_.rank / std::max<int64_t>(1, cfg_.world_size / std::max<int64_t>(1, world_));
    offload_ = cfg_.offload == DistOffload::params || cfg_.offload == DistOffload::optimizer;
    const auto infos = index_params(g);
    for (const auto& p : infos) {
      if (p.buffer) continue;
      FParam f;
      f.info = p;
      f.rows_per_shard = (p.dim0 + world_ - 1) / world_;
      f.row_numel = p.dim0 > 0 ? p.numel / p.dim0 : 0;
      f.padded_shard = checked_mul(f.rows_per_shard, f.row_numel, "FSDP2 shard elements");
      const int64_t rows = std::clamp<int64_t>(p.dim0 - rank_ * f.rows_per_shard, 0, f.rows_per_shard);
      f.rank_numel = checked_mul(rows, f.row_numel, "FSDP2 shard elements");
      if (zero3_) {  // flat partitions of ceil(numel / W) elements, the last rank's padded
        f.persistent = p.numel < kZero3PersistenceThreshold;
        f.padded_shard = f.rank_numel = f.persistent ? p.numel : (p.numel + world_ - 1) / world_;
      }
      index_of_ordinal_.resize(static_cast<size_t>(p.ordinal) + 1, -1);
      index_of_ordinal_[static_cast<size_t>(p.ordinal)] = static_cast<int32_t>(params_.size());
      params_.push_back(f);
    }
    shard_block_.assign(params_.size(), -1);
    if (cfg_.tp > 1) replicate_grad_ = replicate_grad_params(g);
    // Groups in fully_shard order: layers, then the root.
    groups_.resize(g.layers.size() + 1);
    for (size_t l = 0; l < g.layers.size(); ++l) groups_[l].unit = static_cast<int32_t>(l);
    groups_.back().unit = kRoot;
    for (size_t i = 0; i < params_.size(); ++i)
      if (!params_[i].persistent) group_of(params_[i].info.unit).params.push_back(i);
    post_forward_k_ = cfg_.reshard_after_forward > 1 && cfg_.reshard_after_forward < world_ ? cfg_.reshard_after_forward : 0;
    if (zero3_) post_forward_k_ = 0;
    // The argument is passed to every fully_shard call, the root's included (torchtitan / accelerate, and the
    // measurements): torch's "the root keeps its parameters" default applies only to reshard_after_forward=None.
    for (auto& gr : groups_) gr.reshard_after_forward = cfg_.reshard_after_forward != 0;
    report_.units = static_cast<int64_t>(groups_.size());
    for (const auto& f : params_) {
      report_.full_param_bytes = checked_add(report_.full_param_bytes, checked_mul(f.info.numel, dtype_bytes(orig_), "bytes"), "bytes");
      report_.sharded_param_bytes = checked_add(report_.sharded_param_bytes, checked_mul(f.padded_shard, dtype_bytes(orig_), "bytes"), "bytes");
      if (f.info.trainable) report_.optimizer_param_numel += f.rank_numel;
    }
    for (const auto& gr : groups_) {
      int64_t b = 0;
      for (size_t i : gr.params) b = checked_add(b, checked_mul(checked_mul(params_[i].padded_shard, world_, "bytes"), ag_bytes(params_[i]), "bytes"), "bytes");
      report_.largest_unit_unsharded_bytes = std::max(report_.largest_unit_unsharded_bytes, b);
    }
    if (offload_) report_.host_bytes = report_.sharded_param_bytes;
  }

  bool builds_on_device() const override { return false; }
  int64_t built_bytes(int32_t ordinal, const TensorInfo& t) const override {
    const FParam* f = by_ordinal(ordinal);
    if (!f) return t.bytes;  // buffers: materialised on the device, never sharded
    if (offload_) return 0;  // on the host (a 512 B placeholder block in the replay)
    return checked_mul(f->rank_numel, dtype_bytes(orig_), "parameter bytes");
  }

  void before_optimizer(ReplayState& s) override {
    if (zero3_ && orig_ != DType::f32)  // the fp32 copy of the gradient partition the fp32 step reads
      fp32_grad_ = s.mem.alloc(checked_mul(zero3_partition_numel(), 4, "bytes"), Row::gradients);
  }
  void after_optimizer(ReplayState& s) override {
    if (fp32_grad_ >= 0) s.mem.free(fp32_grad_);
    fp32_grad_ = -1;
  }

  void after_build(ReplayState& s) override {
    for (size_t i = 0; i < params_.size(); ++i) shard_block_[i] = s.param_block[static_cast<size_t>(params_[i].info.ordinal)];
    // optimizer.step() sees the sharded DTensors: state of this rank's rows (CPU offload: the step runs on the
    // host).
    s.optimizer_params.clear();
    if (zero3_) {
      // DeepSpeed stage 3: the optimizer steps one flat fp32 partition (a master copy when the parameters are
      // 16-bit); gradient partitions accumulate in one flat buffer of the parameters' dtype, kept for the run.
      const int64_t n = zero3_partition_numel();
      if (orig_ != DType::f32 && !offload_) s.mem.alloc(checked_mul(n, 4, "bytes"), Row::optimizer_state);
      zero3_grad_flat_ = s.mem.alloc(checked_mul(n, dtype_bytes(orig_), "bytes"), Row::gradients);
      if (!offload_) s.optimizer_params.push_back({{n}, DType::f32, n, checked_mul(n, 4, "bytes")});
      return;
    }
    if (!offload_)
      for (const auto& f : params_)
        if (f.info.trainable) {
          const int64_t bytes = checked_mul(f.rank_numel, dtype_bytes(orig_), "bytes");
          s.optimizer_params.push_back({{f.rank_numel}, orig_, f.rank_numel, bytes});
        }
  }

  void pre_forward(ReplayState& s, int32_t unit) override {
    Group& gr = group_of(unit);
    if (unit == kRoot && !lazy_init_done_ && !zero3_) lazy_init(s);
    if (unit == kRoot) post_forward_order_.clear();
    gr.training = Training::forward;
    unshard(s, gr);
    wait_for_unshard(s, gr);
  }

  void post_forward(ReplayState& s, int32_t unit) override {
    Group& gr = group_of(unit);
    if (gr.reshard_after_forward) reshard(s, gr, true);
    gr.post_forward_indices.push_back(static_cast<int32_t>(post_forward_order_.size()));
    post_forward_order_.push_back(static_cast<int32_t>(&gr - groups_.data()));
    gr.training = Training::idle;
    if (unit == kRoot && all_gather_state_ >= 0) {  // the root flushes the last all-gather output
      s.mem.free(all_gather_state_);
      all_gather_state_ = -1;
    }
  }

  void pre_backward(ReplayState& s, int32_t unit) override {
    Group& gr = group_of(unit);
    if (gr.training == Training::pre_backward) return;
    gr.training = Training::pre_backward;
    unshard(s, gr);
    wait_for_unshard(s, gr);
    if (gr.post_forward_indices.empty()) return;
    const int32_t cur = gr.post_forward_indices.back();
    gr.post_forward_indices.pop_back();
    if (cur - 1 < 0) return;
    Group& target = groups_[static_cast<size_t>(post_forward_order_[static_cast<size_t>(cur - 1)])];
    const Training saved = target.training;
    target.training = Training::pre_backward;  // _prefetch_unshard's use_training_state
    unshard(s, target);
    target.training = saved;
  }

  void post_backward(ReplayState& s, int32_t unit) override {
    if (unit != kRoot) {
      reduce(s, group_of(unit));
      return;
    }
    // _root_post_backward_final_callback: every group not yet post-backward (the root's own), then
    // finalize_backward and the last reduce-scatter input.
    for (auto& gr : groups_)
      if (gr.training != Training::post_backward) reduce(s, gr);
    for (auto& gr : groups_) {
      gr.training = Training::idle;
      gr.post_forward_indices.clear();
      if (gr.pending_all_gather >= 0) s.mem.free(gr.pending_all_gather);
      gr.pending_all_gather = kNone;
    }
    post_forward_order_.clear();
    if (reduce_scatter_state_ >= 0) {
      s.mem.free(reduce_scatter_state_);
      reduce_scatter_state_ = -1;
    }
  }

  void zero_grad(ReplayState& s) override {
    for (auto& gr : groups_)
      if (gr.sharded_grad >= 0) {
        s.mem.free(gr.sharded_grad);
        gr.sharded_grad = -1;
      }
  }

 private:
  Group& group_of(int32_t unit) { return unit == kRoot ? groups_.back() : groups_[static_cast<size_t>(unit)]; }
  const FParam* by_ordinal(int32_t ordinal) const {
    const auto o = static_cast<size_t>(ordinal);
    if (o >= index_of_ordinal_.size() || index_of_ordinal_[o] < 0) return nullptr;
    return &params_[static_cast<size_t>(index_of_ordinal_[o])];
  }
  DType ag_dtype(const FParam& f) const { return f.info.dtype; }  // the graph computes in param_dtype
  int64_t ag_bytes(const FParam& f) const { return dtype_bytes(ag_dtype(f)); }
  int64_t zero3_partition_numel() const {
    int64_t n = 0;
    for (const auto& f : params_)
      if (f.info.trainable) n = checked_add(n, (f.info.numel + world_ - 1) / world_, "partition elements");
    return n;
  }
  bool mixed() const {
    if (zero3_) return false;
    for (const auto& f : params_) return f.info.dtype != orig_;
    return false;
  }

  // FSDPState._lazy_init -> FSDPParam.reset_sharded_param: a local shard shorter than the padded one is re-padded.
  void lazy_init(ReplayState& s) {
    lazy_init_done_ = true;
    if (offload_) return;
    for (size_t i = 0; i < params_.size(); ++i) {
      FParam& f = params_[i];
      if (f.rank_numel == f.padded_shard) continue;
      const int32_t padded = s.mem.alloc(checked_mul(f.padded_shard, dtype_bytes(orig_), "bytes"), Row::weights);
      s.mem.free(shard_block_[i]);
      shard_block_[i] = padded;
      s.param_block[static_cast<size_t>(f.info.ordinal)] = padded;
    }
  }

  // FSDPParamGroup.unshard -> foreach_all_gather (copy-in stream).
  void unshard(ReplayState& s, Group& gr) {
    if (gr.pending_all_gather != kNone || gr.state == State::unsharded || gr.params.empty()) return;
    if (world_ == 1) {  // unshard(): no collective, the copy-out copies the shard itself
      gr.pending_all_gather = kNoBuffer;
      return;
    }
    const bool post_forward = gr.state == State::sharded_post_forward;
    const int64_t group_world = post_forward ? post_forward_k_ : world_;
    int64_t input_numel = 0;
    for (size_t i : gr.params)
      input_numel = checked_add(input_numel, input_numel_of(params_[i], post_forward), "all-gather elements");
    const int64_t eb = ag_bytes(params_[gr.params.front()]);
    std::vector<int32_t> inputs;
    if (offload_) {
      // all_gather_inputs: sharded_param_data.to(device) per parameter, then the param_dtype cast.
      for (size_t i : gr.params) {
        const FParam& f = params_[i];
        const int64_t n = input_numel_of(f, post_forward);
        int32_t b = alloc_on(s.mem, checked_mul(n, dtype_bytes(orig_), "bytes"), Row::comm_buffers, kAllGatherCopyInStream);
        if (f.info.dtype != orig_) {
          const int32_t cast = alloc_on(s.mem, checked_mul(n, eb, "bytes"), Row::comm_buffers, kAllGatherCopyInStream);
          s.mem.free(b);
          b = cast;
        }
        inputs.push_back(b);
      }
    } else if (mixed()) {
      inputs.push_back(alloc_on(s.mem, checked_mul(input_numel, eb, "bytes"), Row::comm_buffers, kAllGatherCopyInStream));
    }
    gr.pending_all_gather = alloc_on(s.mem, checked_mul(checked_mul(input_numel, group_world, "bytes"), eb, "bytes"),
                                     Row::comm_buffers, kAllGatherCopyInStream);
    for (int32_t b : inputs) s.mem.free(b);
  }

  int64_t input_numel_of(const FParam& f, bool post_forward) const {
    return post_forward ? checked_mul(f.padded_shard, world_, "elements") / post_forward_k_ : f.padded_shard;
  }

  // FSDPParamGroup.wait_for_unshard: copy-out into the unsharded storages (default stream).
  // In forward the previous group's all-gather output is released by `comm_ctx.all_gather_state = None`, but the
  // walrus-bound local `prev_all_gather_state` keeps it until the method returns: after this group's copy-out
  // (recordings: the unsharded parameters are allocated before the previous flat buffer is freed).
  void wait_for_unshard(ReplayState& s, Group& gr) {
    if (gr.pending_all_gather == kNone) return;
    if (zero3_) {  // _allgather_params_coalesced: the parameters become views of the gathered flat buffer
      // A shard group of one gathers nothing (kNoBuffer): the parameters are the shards themselves.
      if (gr.pending_all_gather >= 0) s.mem.set_row(gr.pending_all_gather, Row::weights);
      gr.gathered = gr.pending_all_gather >= 0 ? gr.pending_all_gather : -1;
      gr.pending_all_gather = kNone;
      gr.state = State::unsharded;
      return;
    }
    const bool forward = gr.training == Training::forward;
    int32_t previous = -1;
    if (forward) {
      previous = all_gather_state_;
      all_gather_state_ = -1;
    }
    for (size_t i : gr.params) {
      FParam& f = params_[i];
      f.unsharded = s.mem.alloc(checked_mul(checked_mul(f.padded_shard, world_, "bytes"), ag_bytes(f), "bytes"), Row::weights);
    }
    if (gr.state == State::sharded_post_forward)
      for (size_t i : gr.params) {  // to_unsharded drops the post-forward shards
        FParam& f = params_[i];
        if (f.post_forward >= 0) s.mem.free(f.post_forward);
        f.post_forward = -1;
      }
    gr.state = State::unsharded;
    if (gr.pending_all_gather >= 0) {
      if (forward) {
        all_gather_state_ = gr.pending_all_gather;
      } else {
        s.mem.free(gr.pending_all_gather);
      }
    }
    gr.pending_all_gather = kNone;
    if (previous >= 0) s.mem.free(previous);
  }

  void reshard(ReplayState& s, Group& gr, bool after_forward) {
    if (gr.state != State::unsharded) return;
    if (zero3_) {
      if (gr.gathered >= 0) s.mem.free(gr.gathered);
      gr.gathered = -1;
      gr.state = State::sharded;
      return;
    }
    const bool to_post_forward = after_forward && post_forward_k_ > 0;
    for (size_t i : gr.params) {
      FParam& f = params_[i];
      if (to_post_forward)
        f.post_forward = s.mem.alloc(checked_mul(input_numel_of(f, true), ag_bytes(f), "bytes"), Row::weights);
      if (f.unsharded >= 0) s.mem.free(f.unsharded);
      f.unsharded = -1;
    }
    gr.state = to_post_forward ? State::sharded_post_forward : State::sharded;
  }

  // FSDPParamGroup.post_backward -> foreach_reduce.
  void reduce(ReplayState& s, Group& gr) {
    gr.training = Training::post_backward;
    std::vector<size_t> with_grad;
    for (size_t i : gr.params)
      if (s.param_grad[static_cast<size_t>(params_[i].info.ordinal)] >= 0) with_grad.push_back(i);
    // FSDP x TP: unsharded_grad_data redistributes a gradient whose placements differ from the parameter's
    // (the embedding's Replicate [V, H], tp.cpp) to this TP rank's rows, then `.grad = None` drops the full one.
    for (size_t i : with_grad) {
      const auto o = static_cast<size_t>(params_[i].info.ordinal);
      if (o >= replicate_grad_.size() || !replicate_grad_[o]) continue;
      const int32_t local = s.mem.alloc(checked_mul(params_[i].info.numel, dtype_bytes(params_[i].info.dtype), "bytes"), Row::gradients);
      s.mem.free(s.param_grad[o]);
      s.param_grad[o] = local;
    }
    reshard(s, gr, false);
    if (with_grad.empty()) return;
    if (reduce_scatter_state_ >= 0) {
      s.mem.free(reduce_scatter_state_);
      reduce_scatter_state_ = -1;
    }
    const DType grad_dtype = params_[with_grad.front()].info.dtype;
    DType reduce_dtype = grad_dtype;
    if (!cfg_.reduce_dtype.empty()) parse_mp_dtype(cfg_.reduce_dtype, reduce_dtype);
    int64_t out_numel = 0;
    for (size_t i : with_grad) out_numel = checked_add(out_numel, params_[i].padded_shard, "reduce-scatter elements");
    const int64_t rb = dtype_bytes(reduce_dtype);
    const int32_t rs_input = s.mem.alloc(checked_mul(checked_mul(out_numel, world_, "bytes"), rb, "bytes"), Row::comm_buffers);
    for (size_t i : with_grad) {  // unsharded_grads.clear()
      int32_t& g = s.param_grad[static_cast<size_t>(params_[i].info.ordinal)];
      s.mem.free(g);
      g = -1;
    }
    if (zero3_) {  // reduce-scattered into the flat gradient partition in place; the staging buffer goes at once
      s.mem.free(rs_input);
      return;
    }
    int32_t out = alloc_on(s.mem, checked_mul(out_numel, rb, "bytes"), Row::gradients, kReduceScatterStream);
    if (reduce_dtype != orig_) {  // _to_dtype_if_needed(reduce_output, orig_dtype)
      const int32_t cast = alloc_on(s.mem, checked_mul(out_numel, dtype_bytes(orig_), "bytes"), Row::gradients, kReduceScatterStream);
      s.mem.free(out);
      out = cast;
    }
    if (offload_ || gr.sharded_grad >= 0) {
      s.mem.free(out);  // copied to the host / added into the existing sharded .grad
    } else {
      gr.sharded_grad = out;
    }
    reduce_scatter_state_ = rs_input;
  }

  DistributedConfig cfg_;
  DType orig_;
  int64_t world_ = 1, rank_ = 0, post_forward_k_ = 0;
  bool offload_ = false;
  bool lazy_init_done_ = false;
  bool zero3_ = false;
  int32_t zero3_grad_flat_ = -1, fp32_grad_ = -1;
  std::vector<FParam> params_;
  std::vector<int32_t> shard_block_;       // by params_ index: the padded shard's block
  std::vector<bool> replicate_grad_;       // by ordinal (tp > 1): .grad arrives Replicate (replicate_grad_params)
  std::vector<int32_t> index_of_ordinal_;  // ordinal -> params_ index, -1 for buffers
  std::vector<Group> groups_;
  std::vector<int32_t> post_forward_order_;  // group indices in post-forward order
  int32_t all_gather_state_ = -1;            // comm_ctx.all_gather_state's output
  int32_t reduce_scatter_state_ = -1;        // comm_ctx.reduce_scatter_state's input
};

}  // namespace

std::unique_ptr<Strategy> make_fsdp2(const RunConfig& cfg, const Graph& g, DType orig_dtype) {
  if (cfg.distributed.dp() < 1)
    throw InputError("distributed.world_size", std::to_string(cfg.distributed.world_size), "must be a multiple of tp x pp x cp");
  return std::make_unique<Fsdp2>(cfg, g, orig_dtype, false);
}

std::unique_ptr<Strategy> make_zero3_semantics(const RunConfig& cfg, const Graph& g, DType orig_dtype) {
  return std::make_unique<Fsdp2>(cfg, g, orig_dtype, true);
}

}  // namespace memplan::dist
