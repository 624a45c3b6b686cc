#include "engine/step_replay.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <memory>

#include "engine/checked.h"
#include "engine/dist/rank_hooks.h"
#include "engine/optimizer_model.h"

namespace memplan {

namespace {

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n = checked_mul(n, d);
  return n;
}

// What outlives one graph: the allocator-visible memory, the parameters (by ordinal: the k-th parameter or
// buffer of every graph of one model is the same tensor), their gradients, the optimizer state and the library
// workspaces. Replaying steps of different shapes (dynamic sequence lengths) shares one session.
struct ReplaySession {
  ReplaySession(const RunConfig& cfg, MemoryTracker::Storage lent)
      : mem(std::move(lent)), optimizer(cfg.optimizer, cfg.optimizer_impl, cfg.gpu_sm_count, cfg.gpu_max_threads_per_sm) {}
  MemoryTracker mem;
  OptimizerModel optimizer;
  std::vector<TrainableParam> params;
  std::vector<int32_t> param_block;  // by ordinal
  std::vector<int32_t> param_grad;   // by ordinal, -1 when .grad is None

  bool built = false;
  bool fwd_workspace = false, bwd_workspace = false, fwd_lt_workspace = false, bwd_lt_workspace = false;
};

// Reference-counted storages and gradient buffers over one Graph, on top of a ReplaySession.
class Replayer {
 public:
  Replayer(const Graph& g, const RunConfig& cfg, const ReplayOptions& opt, ReplaySession& session)
      : g_(g), cfg_(cfg), opt_(opt), session_(session), mem_(session.mem) {
    const size_t n = g.tensors.size();
    refs_.assign(n, 0);
    saved_refs_.assign(n, 0);
    block_.assign(n, -1);
    grad_of_.assign(n, -1);
    param_edges_.assign(n, 0);
    param_arrivals_.assign(n, 0);
    for (const Op& op : g.ops)
      if (op.has_backward)
        for (const GradSpec& gs : op.grads)
          if (g.tensors[static_cast<size_t>(gs.input)].kind == TensorKind::param) ++param_edges_[static_cast<size_t>(gs.input)];
    name_kind_.assign(g.names.size(), 0);
    for (size_t i = 0; i < g.names.size(); ++i) {
      const std::string& name = g.names[i];
      if (name == "linear" || name == "matmul") name_kind_[i] = kGemm;
      if (name == "addmm") name_kind_[i] = kGemm | kAddmm;
    }
    ordinal_.assign(n, -1);
    int32_t next_ordinal = 0;
    for (size_t t = 0; t < n; ++t)
      if (g.tensors[t].kind == TensorKind::param || g.tensors[t].kind == TensorKind::buffer) ordinal_[t] = next_ordinal++;
    // releases_at(op): tensors whose Python reference dies after `op`, as one flat CSR array.
    release_start_.assign(g.ops.size() + 1, 0);
    auto releasable = [&](size_t t) {
      const int32_t r = g.py_release_op[t];
      return g.tensors[t].kind == TensorKind::activation && static_cast<TensorId>(t) != g.loss && r >= 0 &&
             r < static_cast<int32_t>(g.ops.size());
    };
    for (size_t t = 0; t < n; ++t)
      if (releasable(t)) ++release_start_[static_cast<size_t>(g.py_release_op[t]) + 1];
    for (size_t i = 1; i < release_start_.size(); ++i) release_start_[i] += release_start_[i - 1];
    release_flat_.resize(static_cast<size_t>(release_start_.back()));
    std::vector<int32_t> fill(release_start_.begin(), release_start_.end() - 1);
    for (size_t t = 0; t < n; ++t)
      if (releasable(t)) release_flat_[static_cast<size_t>(fill[static_cast<size_t>(g.py_release_op[t])]++)] = static_cast<TensorId>(t);
    gblocks_.reserve(g.ops.size() * 2);
    layer_of_op_.assign(g.ops.size(), -1);
    for (size_t l = 0; l < g.layers.size(); ++l)
      for (int32_t i = g.layers[l].first_op; i < g.layers[l].end_op; ++i) layer_of_op_[static_cast<size_t>(i)] = static_cast<int32_t>(l);
    region_inputs_.assign(g.layers.size(), {});
    recompute_end_.assign(g.layers.size(), -1);
    inputs_release_op_.assign(g.layers.size(), -1);
    recompute_stops_at_inputs_.assign(g.layers.size(), false);
    for (size_t l = 0; l < g.layers.size(); ++l) {
      const auto& L = g.layers[l];
      if (!L.checkpointed) continue;
      int32_t first_saver = -1;
      for (int32_t i = L.first_op; i < L.end_op; ++i) {
        const Op& op = g.ops[static_cast<size_t>(i)];
        for (TensorId r : op.reads) {
          const auto& ri = g.tensors[static_cast<size_t>(r)];
          if (ri.kind != TensorKind::activation) continue;
          const int32_t c = creator(r);
          if (c < L.first_op && std::find(region_inputs_[l].begin(), region_inputs_[l].end(), r) == region_inputs_[l].end())
            region_inputs_[l].push_back(r);
        }
        if (op.has_backward && !op.saved.empty()) {  // early stop after the last saver
          if (first_saver < 0) first_saver = i;
          recompute_end_[l] = i + 1;
          bool inputs_only = true;
          for (TensorId sv : op.saved)
            inputs_only = inputs_only && std::find(op.reads.begin(), op.reads.end(), sv) != op.reads.end();
          recompute_stops_at_inputs_[l] = inputs_only;
        }
      }
      // The checkpoint frame that keeps the region's inputs goes with the last saved tensor its hooks packed:
      // once the region's first saving node has run backward (the nodes before it save nothing), not after
      // the whole region (whole-run stream: a layer's input freed before its input norm's ToCopyBackward).
      inputs_release_op_[l] = first_saver >= 0 ? first_saver : L.first_op;
    }
  }

  // Builds the model (first graph of a session) or binds this graph's parameters to the session's.
  void bind_parameters() {
    if (!session_.built) {
      mem_.here = Location{};
      // Construction's own tensors exist on the GPU only when the model is built there: model.to("cuda")
      // (RunConfig::weights_load) and a wrapper that materialises parameters itself move parameters alone.
      const bool on_device = cfg_.weights_load == WeightsLoad::on_device &&
                             (!opt_.rank_hooks || opt_.rank_hooks->builds_on_device());
      if (on_device)
        for (int64_t b : g_.build_persistent_bytes) mem_.alloc(b, Row::weights);  // kept for the run
      for (size_t t = 0; t < g_.tensors.size(); ++t) {
        const auto& ti = g_.tensors[t];
        if (ordinal_[t] < 0) continue;
        const int64_t built = opt_.rank_hooks ? opt_.rank_hooks->built_bytes(ordinal_[t], ti) : ti.bytes;
        session_.param_block.push_back(mem_.alloc(built, Row::weights));
        session_.param_grad.push_back(-1);
        if (ti.trainable) session_.params.push_back({ti.shape, ti.dtype, ti.bytes / dtype_bytes(ti.dtype), ti.bytes});
      }
      // Graph::build_temp_bytes are all alive together until tie_weights() drops them (T5's two embed_tokens and
      // lm_head: whole-run streams, three embedding-sized segments cached after construction).
      if (on_device) mem_.transients_together(g_.build_temp_bytes);
      session_.built = true;
      hook([](dist::RankHooks& h, dist::ReplayState& s) { h.after_build(s); });
    }
    for (size_t t = 0; t < g_.tensors.size(); ++t) {
      if (ordinal_[t] < 0) continue;
      assert(static_cast<size_t>(ordinal_[t]) < session_.param_block.size() && "graphs of one session share parameters");
      block_[t] = session_.param_block[static_cast<size_t>(ordinal_[t])];
      refs_[t] = 1;
    }
  }

  StepStats step(int32_t index, bool record_layers) {
    if (record_layers) layer_stats_ = layer_params();
    return train_step(index, record_layers);
  }
  std::vector<LayerStats> take_layers() { return std::move(layer_stats_); }

  // ---- a step that repeats the previous one (replay_training_sequence)
  // What a step's replay reads besides this graph and the session's parameters and optimizer, taken at the
  // step's start (after bind_parameters). The optimizer is stateless once it has run a step
  // (OptimizerModel::step creates state on its first call only), so from the third step on two steps starting
  // from equal Starts, the tracker's live set and rows aside, emit the same events up to the ids of the blocks
  // they allocate.
  struct Start {
    std::vector<int32_t> refs, saved_refs, block, grad_of, arrivals, param_grad;
    std::vector<TensorId> cache_live;
    bool workspaces[4] = {};
    int64_t current = 0;
    Ledger ledger;
    int64_t event = 0;        // the step's first event
    int32_t first_block = 0;  // the first block id it allocates
  };
  Start start() const {
    Start st{refs_, saved_refs_, block_, grad_of_, param_arrivals_, session_.param_grad, cache_live_,
             {session_.fwd_workspace, session_.bwd_workspace, session_.fwd_lt_workspace, session_.bwd_lt_workspace},
             mem_.current_bytes(), mem_.ledger(), mem_.event_count(), mem_.block_count()};
    return st;
  }
  static bool same_start(const Start& a, const Start& b) {
    return a.refs == b.refs && a.saved_refs == b.saved_refs && a.block == b.block && a.grad_of == b.grad_of &&
           a.arrivals == b.arrivals && a.param_grad == b.param_grad && a.cache_live == b.cache_live &&
           std::equal(std::begin(a.workspaces), std::end(a.workspaces), std::begin(b.workspaces)) &&
           a.current == b.current && a.ledger.bytes == b.ledger.bytes;
  }
  // Step `index` as a repeat of the previous step `prev` (which started at `from`): its events again with fresh
  // block ids, its figures, its peak where the previous one's was. The tracker ends where the replay would.
  StepStats repeat_step(int32_t index, const StepStats& prev) {
    const int64_t begin = mem_.event_count();
    mem_.repeat_span(prev.event_begin, prev.event_end, static_cast<int32_t>(first_block_of_prev_));
    StepStats st = prev;
    st.event_begin = begin;
    st.event_end = mem_.event_count();
    st.peak.where.step = index;
    mem_.set_peak(st.peak);
    mem_.here.step = index;
    return st;
  }
  int64_t first_block_of_prev_ = 0;  // set by the caller before repeat_step

  private:
  // ---- distributed wrapper callbacks (engine/dist/rank_hooks.h); nothing happens without a strategy
  template <class F>
  void hook(F&& f) {
    if (!opt_.rank_hooks) return;
    dist::ReplayState s{mem_, g_, session_.param_block, session_.param_grad, session_.params, mem_.here.step,
                        mem_.here.micro_batch};
    f(*opt_.rank_hooks, s);
  }
  void hook_unit(void (dist::RankHooks::*fn)(dist::ReplayState&, int32_t), int32_t unit) {
    hook([&](dist::RankHooks& h, dist::ReplayState& s) { (h.*fn)(s, unit); });
  }

  int32_t creator(TensorId t) const {
    if (creator_.empty()) {
      creator_.assign(g_.tensors.size(), -1);
      for (size_t i = 0; i < g_.ops.size(); ++i)
        for (TensorId o : g_.ops[i].outs) creator_[static_cast<size_t>(o)] = static_cast<int32_t>(i);
    }
    return creator_[static_cast<size_t>(t)];
  }
  TensorId storage(TensorId t) const { return g_.tensors[static_cast<size_t>(t)].storage; }

  // ---- storages
  Row activation_row(TensorId s) const {
    const auto& ti = g_.tensors[static_cast<size_t>(s)];
    if (ti.autocast_cache) return Row::autocast_cache;
    if (ti.kind == TensorKind::input) return Row::inputs;
    return saved_refs_[static_cast<size_t>(s)] > 0 ? Row::activations : Row::transient;
  }
  void recategorize(TensorId s) {
    if (block_[static_cast<size_t>(s)] >= 0 && g_.tensors[static_cast<size_t>(s)].kind == TensorKind::activation)
      mem_.set_row(block_[static_cast<size_t>(s)], activation_row(s));
  }
  void create(TensorId t) {
    const TensorId s = storage(t);
    if (s == t) {
      if (block_[static_cast<size_t>(s)] < 0) block_[static_cast<size_t>(s)] = mem_.alloc(g_.tensors[static_cast<size_t>(t)].bytes, activation_row(s));
      ++refs_[static_cast<size_t>(s)];
    } else {
      ++refs_[static_cast<size_t>(s)];
    }
  }
  void ref(TensorId t) { ++refs_[static_cast<size_t>(storage(t))]; }
  void unref(TensorId t) {
    const auto s = static_cast<size_t>(storage(t));
    assert(refs_[s] > 0);
    if (--refs_[s] == 0 && block_[s] >= 0) {
      mem_.free(block_[s]);
      block_[s] = -1;
    }
  }
  void save(TensorId t) {
    ref(t);
    ++saved_refs_[static_cast<size_t>(storage(t))];
    recategorize(storage(t));
  }
  void unsave(TensorId t) {
    --saved_refs_[static_cast<size_t>(storage(t))];
    recategorize(storage(t));
    unref(t);
  }

  // ---- gradient buffers (shared between tensors when a backward passes a gradient through)
  int32_t new_grad(int64_t bytes, bool view = false) {
    gblocks_.push_back({mem_.alloc(bytes, Row::activation_grads), 1, view});
    return static_cast<int32_t>(gblocks_.size() - 1);
  }
  void grad_unref(int32_t gb) {
    auto& b = gblocks_[static_cast<size_t>(gb)];
    if (--b.refs == 0) mem_.free(b.block);
  }

  // cuBLAS keeps one workspace per (handle, stream); each thread has its own handle, so the forward thread and
  // the autograd thread each allocate one on their first GEMM, once the GEMM's output exists (traces: output,
  // then the 32 MiB). The 1 MiB cuBLASLt workspace comes with a thread's first bias-epilogue addmm: backward's
  // own GEMMs are plain mm, so the autograd thread takes one only when a checkpoint recompute runs an addmm
  // (whole-run streams: gpt2-medium, GPT-2 small checkpointed).
  // `autograd_thread`: backward and checkpoint recomputes run there; `forward_kernel`: the op's own forward
  // (its GEMM may be an addmm) rather than its backward (plain mm).
  void maybe_workspace(const Op& op, bool autograd_thread, bool forward_kernel) {
    bool& done = autograd_thread ? session_.bwd_workspace : session_.fwd_workspace;
    bool& lt_done = autograd_thread ? session_.bwd_lt_workspace : session_.fwd_lt_workspace;
    const uint8_t kind = name_kind_[static_cast<size_t>(op.name)];
    if (!done && (kind & kGemm)) {
      done = true;
      mem_.alloc(opt_.cublas_workspace_bytes, Row::library_workspace);
    }
    if (!lt_done && forward_kernel && (kind & kAddmm)) {
      lt_done = true;
      mem_.alloc(opt_.cublaslt_workspace_bytes, Row::library_workspace);
    }
  }

  // ---- forward
  void forward_op(int32_t i, bool retain_saved, int32_t recompute_layer) {
    const Op& op = g_.ops[static_cast<size_t>(i)];
    mem_.here.op = i;
    // Autograd saves an op's inputs before running it: a recompute whose last saver saves only inputs stops
    // (early-stop exception) before that op allocates anything (whole-run stream, checkpointed Llama layers).
    const bool stops_before_running = recompute_layer >= 0 && recompute_stops_at_inputs_[static_cast<size_t>(recompute_layer)] &&
                                      i == recompute_end_[static_cast<size_t>(recompute_layer)] - 1;
    if (!stops_before_running) {
      for (TensorId o : op.outs) {
        create(o);
        if (g_.tensors[static_cast<size_t>(o)].autocast_cache) {
          ref(o);  // the autocast cache's reference
          cache_live_.push_back(o);
        }
      }
      maybe_workspace(op, recompute_layer >= 0, true);
      for (int64_t b : op.fwd_temp_bytes) mem_.workspace(b, op.optional_workspaces);
    }
    if (retain_saved && op.has_backward)
      for (TensorId s : op.saved) save(s);
    saved_live_[static_cast<size_t>(i)] = retain_saved && op.has_backward;
    if (recompute_layer < 0) {
      for (TensorId t : releases_at(i)) unref(t);
    } else {
      const auto& L = g_.layers[static_cast<size_t>(recompute_layer)];
      const int32_t stop = recompute_end_[static_cast<size_t>(recompute_layer)] - 1;
      for (TensorId t : releases_at(i))
        if (creator(t) >= L.first_op) unref(t);
      if (i == stop) {  // tensors the region would release later die with the recompute
        for (int32_t j = L.first_op; j <= stop; ++j) {
          if (j == stop && stops_before_running) break;
          for (TensorId o : g_.ops[static_cast<size_t>(j)].outs)
            if (g_.py_release_op[static_cast<size_t>(o)] > stop && o != g_.loss) unref(o);
        }
      }
    }
    if (i == g_.autocast_exit_op || (recompute_layer >= 0 && i == recompute_end_[static_cast<size_t>(recompute_layer)] - 1)) {
      for (TensorId c : cache_live_) unref(c);
      cache_live_.clear();
    }
  }

  void forward(int32_t n_ops, std::vector<LayerStats>* layer_stats) {
    int64_t layer_start = 0;
    hook_unit(&dist::RankHooks::pre_forward, dist::kRoot);
    for (int32_t i = 0; i < n_ops; ++i) {
      const int32_t l = layer_of_op_[static_cast<size_t>(i)];
      const bool first = l >= 0 && i == g_.layers[static_cast<size_t>(l)].first_op;
      const bool ckpt = l >= 0 && g_.layers[static_cast<size_t>(l)].checkpointed;
      if (first) {
        layer_start = mem_.current_bytes();
        mem_.reset_sub_window();
        hook_unit(&dist::RankHooks::pre_forward, l);
      }
      if (ckpt && first)
        for (TensorId t : region_inputs_[static_cast<size_t>(l)]) ref(t);  // the checkpoint keeps its inputs
      forward_op(i, !ckpt, -1);
      if (l >= 0 && i == g_.layers[static_cast<size_t>(l)].end_op - 1) hook_unit(&dist::RankHooks::post_forward, l);
      if (layer_stats && l >= 0 && i == g_.layers[static_cast<size_t>(l)].end_op - 1) {
        LayerStats& ls = (*layer_stats)[static_cast<size_t>(l)];
        ls.saved_bytes = mem_.current_bytes() - layer_start;
        ls.transient_peak_bytes = mem_.sub_window_peak() - layer_start;
      }
    }
    hook_unit(&dist::RankHooks::post_forward, dist::kRoot);
  }

  std::vector<LayerStats> layer_params() const {
    std::vector<LayerStats> out(g_.layers.size());
    for (size_t l = 0; l < g_.layers.size(); ++l) out[l].name = g_.name_of(g_.layers[l].name);
    std::vector<bool> seen(g_.tensors.size(), false);
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const int32_t l = layer_of_op_[i];
      for (TensorId r : g_.ops[i].reads) {
        const auto& ti = g_.tensors[static_cast<size_t>(r)];
        if (ti.kind != TensorKind::param || seen[static_cast<size_t>(r)]) continue;
        seen[static_cast<size_t>(r)] = true;  // a parameter belongs to the layer that first reads it
        if (l < 0) continue;
        out[static_cast<size_t>(l)].param_bytes += ti.bytes;
        out[static_cast<size_t>(l)].param_count += ti.bytes / dtype_bytes(ti.dtype);
      }
    }
    return out;
  }

  void recompute(int32_t l) {
    const auto& L = g_.layers[static_cast<size_t>(l)];
    mem_.here.recompute = true;
    for (int32_t i = L.first_op; i < recompute_end_[static_cast<size_t>(l)]; ++i) forward_op(i, true, l);
    mem_.here.recompute = false;
  }

  // ---- backward
  // InputBuffer::accumulate: the first gradient is held; a later one is added in place when the buffer owns a
  // non-view tensor, else the two are summed into a fresh one.
  void accumulate(int32_t& cur, int32_t gb, const TensorInfo& ti) {
    if (cur < 0) { cur = gb; return; }
    if (cur == gb) { grad_unref(gb); return; }
    const auto& held = gblocks_[static_cast<size_t>(cur)];
    if (held.refs == 1 && !held.view) {
      grad_unref(gb);
      return;
    }
    int64_t bytes = dtype_bytes(ti.dtype);
    for (int64_t d : ti.shape) bytes = checked_mul(bytes, d);
    const int32_t sum = new_grad(bytes);
    grad_unref(cur);
    grad_unref(gb);
    cur = sum;
  }

  void deliver(TensorId t, int32_t gb) {
    const auto& ti = g_.tensors[static_cast<size_t>(t)];
    if (ti.kind != TensorKind::param) {
      accumulate(grad_of_[static_cast<size_t>(t)], gb, ti);
      return;
    }
    if (!ti.trainable) { grad_unref(gb); return; }
    // AccumulateGrad's own InputBuffer collects one gradient per op reading the parameter (two for a tied
    // embedding) and the node runs once the last has arrived (whole runs: the tied head's gradient lives until
    // the embedding's backward, in every micro-batch).
    accumulate(grad_of_[static_cast<size_t>(t)], gb, ti);
    if (++param_arrivals_[static_cast<size_t>(t)] < param_edges_[static_cast<size_t>(t)]) return;
    accumulate_grad(t);
  }

  // AccumulateGrad with the collected gradient: steals it as .grad when .grad is None and nothing else holds it
  // (clones it otherwise), else adds it into .grad in place.
  void accumulate_grad(TensorId t) {
    const auto& ti = g_.tensors[static_cast<size_t>(t)];
    int32_t& buf = grad_of_[static_cast<size_t>(t)];
    param_arrivals_[static_cast<size_t>(t)] = 0;
    if (buf < 0) return;
    const int32_t gb = buf;
    buf = -1;
    int32_t& pg = session_.param_grad[static_cast<size_t>(ordinal_[static_cast<size_t>(t)])];
    auto& held = gblocks_[static_cast<size_t>(gb)];
    if (pg >= 0) {
      grad_unref(gb);
    } else if (held.refs == 1) {
      pg = held.block;
      mem_.set_row(pg, Row::gradients);
      held.refs = 0;
    } else {
      pg = mem_.alloc(ti.bytes, Row::gradients);
      grad_unref(gb);
    }
    const int32_t ordinal = ordinal_[static_cast<size_t>(t)];
    hook([&](dist::RankHooks& h, dist::ReplayState& s) { h.grad_ready(s, ordinal); });
  }

  // `unpacked_saves`: the op ran inside a checkpointed region, so its saved tensors come from the
  // checkpoint's unpack hook, which hands over the recomputed tensor and forgets it; the node's apply holds
  // the only reference and drops it when it returns, before validate_outputs casts / reduces (whole-run
  // stream, GPT-2 amp + checkpointing: a Conv1D's saved input and weight copy die before its bias gradient
  // is reduced). Without hooks the node keeps them until release_variables(), after validate_outputs.
  void backward_op(int32_t i, bool unpacked_saves) {
    const Op& op = g_.ops[static_cast<size_t>(i)];
    mem_.here.op = i;
    bool any = false;
    for (TensorId o : op.outs) any = any || grad_of_[static_cast<size_t>(o)] >= 0;
    if (!any) return;  // not reached by the loss: its saved tensors go with the graph at the end
    auto& pre = pre_temp_scratch_;
    pre.clear();
    for (int64_t b : op.bwd_pre_temp_bytes) pre.push_back(mem_.alloc(b, Row::transient));
    auto& produced = produced_scratch_;
    produced.clear();
    for (const GradSpec& gs : op.grads) {
      const auto& in = g_.tensors[static_cast<size_t>(gs.input)];
      if (gs.alias_out >= 0) {
        const TensorId o = op.outs[static_cast<size_t>(gs.alias_out)];
        const int32_t og = grad_of_[static_cast<size_t>(o)];
        if (og < 0) continue;
        const auto& out = g_.tensors[static_cast<size_t>(o)];
        const int64_t in_n = numel_of(in.shape), out_n = numel_of(out.shape);
        if (gs.cast_to_bytes > 0) {  // validate_outputs reduces / casts the passed-through gradient
          ++gblocks_[static_cast<size_t>(og)].refs;
          produced.push_back({gs.input, og, gs.cast_to_bytes, &gs});
        } else if (in_n == out_n || gs.narrow_of_out) {
          // Passed through; a dtype change is validate_outputs' cast once the node has returned. A reshape that
          // copied hands it back as a view (GraphBuilder::contiguous_copy's grad_as_view): the buffer that holds it
          // first cannot add into it in place.
          ++gblocks_[static_cast<size_t>(og)].refs;
          if (gs.arrives_as_view && !gs.narrow_of_out) gblocks_[static_cast<size_t>(og)].view = true;
          produced.push_back({gs.input, og, out.dtype == in.dtype || gs.narrow_of_out ? 0 : checked_mul(in_n, dtype_bytes(in.dtype)), &gs});
        } else {
          // An expanded (broadcast) view's gradient is summed back to the base's shape: a fresh buffer in the
          // gradient's dtype; validate_outputs then casts it to the input's dtype when they differ (whole-run
          // stream f31-t5s-bf16-b6s700t90-ckpt: T5's bf16 position bias added in place to the math backend's fp32
          // scores gets an fp32 [1, H, S, S] sum, then its bf16 cast, then the sum is freed).
          produced.push_back({gs.input, new_grad(checked_mul(in_n, dtype_bytes(out.dtype))),
                              out.dtype == in.dtype ? 0 : checked_mul(in_n, dtype_bytes(in.dtype)), &gs});
        }
      } else {
        produced.push_back({gs.input, new_grad(gs.bytes, gs.arrives_as_view), gs.cast_to_bytes, &gs});
      }
      maybe_workspace(op, true, false);
      if (gs.then_temp_bytes > 0) mem_.workspace(gs.then_temp_bytes, op.optional_workspaces);
    }
    for (auto it = pre.rbegin(); it != pre.rend(); ++it) mem_.free(*it);
    for (int64_t b : op.bwd_temp_bytes) mem_.workspace(b);
    if (unpacked_saves) release_saved(i);
    // validate_outputs and the hand-over to the next nodes go by input position, whatever the computation order.
    // (Sorted already but for a MulBackward; checked first, since stable_sort allocates a buffer per call.)
    const auto by_slot = [](const Produced& x, const Produced& y) { return x.spec->input_slot < y.spec->input_slot; };
    if (!std::is_sorted(produced.begin(), produced.end(), by_slot))
      std::stable_sort(produced.begin(), produced.end(), by_slot);
    for (auto& p : produced) {  // validate_outputs
      if (p.cast_to_bytes == 0) continue;
      const int32_t cast = new_grad(p.cast_to_bytes);
      if (p.spec->reduce_workspace_bytes > 0) {
        mem_.workspace(p.spec->reduce_workspace_bytes);
        mem_.workspace(p.spec->reduce_semaphore_bytes);
      }
      grad_unref(p.grad);
      p.grad = cast;
    }
    for (TensorId o : op.outs) {
      int32_t& og = grad_of_[static_cast<size_t>(o)];
      if (og >= 0) { grad_unref(og); og = -1; }
    }
    release_saved(i);
    // A gradient that arrives as a view of the GEMM output (a linear's 3-d input, flattened by a reshape whose
    // ViewBackward node sits between this node and the input's buffer) reaches that buffer only when the view's
    // node runs: after the AccumulateGrad nodes this node readied (they run first, by priority). So it is handed
    // over last (whole-run DeBERTa-v2 stream: query_proj's weight, read twice, sums its two gradients before the
    // layer input's gradient absorbs dX).
    bool deferred = false;
    for (const auto& p : produced) {
      if (p.spec->arrives_as_view && g_.tensors[static_cast<size_t>(p.input)].kind != TensorKind::param) {
        deferred = true;
        continue;
      }
      deliver(p.input, p.grad);
    }
    if (deferred)
      for (const auto& p : produced)
        if (p.spec->arrives_as_view && g_.tensors[static_cast<size_t>(p.input)].kind != TensorKind::param)
          deliver(p.input, p.grad);
  }

  void release_saved(int32_t i) {
    if (!saved_live_[static_cast<size_t>(i)]) return;
    for (TensorId s : g_.ops[static_cast<size_t>(i)].saved) unsave(s);
    saved_live_[static_cast<size_t>(i)] = false;
  }

  void backward() {
    const TensorId loss = g_.loss;
    grad_of_[static_cast<size_t>(loss)] = new_grad(dtype_bytes(g_.tensors[static_cast<size_t>(loss)].dtype));
    hook_unit(&dist::RankHooks::pre_backward, dist::kRoot);
    std::vector<bool> recomputed(g_.layers.size(), false);
    for (int32_t i = static_cast<int32_t>(g_.ops.size()) - 1; i >= 0; --i) {
      const int32_t l = layer_of_op_[static_cast<size_t>(i)];
      const bool ckpt = l >= 0 && g_.layers[static_cast<size_t>(l)].checkpointed;
      if (l >= 0 && i == g_.layers[static_cast<size_t>(l)].end_op - 1) hook_unit(&dist::RankHooks::pre_backward, l);
      if (ckpt && !recomputed[static_cast<size_t>(l)] && i < recompute_end_[static_cast<size_t>(l)]) {
        recomputed[static_cast<size_t>(l)] = true;
        recompute(l);
      }
      if (g_.ops[static_cast<size_t>(i)].has_backward) backward_op(i, ckpt);
      if (ckpt && i == inputs_release_op_[static_cast<size_t>(l)])
        for (TensorId t : region_inputs_[static_cast<size_t>(l)]) unref(t);
      if (l >= 0 && i == g_.layers[static_cast<size_t>(l)].first_op) hook_unit(&dist::RankHooks::post_backward, l);
    }
    // Parameters whose readers did not all deliver a gradient (ops the loss does not reach) still get theirs.
    for (size_t t = 0; t < g_.tensors.size(); ++t)
      if (param_arrivals_[t] > 0) accumulate_grad(static_cast<TensorId>(t));
    hook_unit(&dist::RankHooks::post_backward, dist::kRoot);
    // The graph is freed: saved tensors of nodes backward never reached, leftover gradients, the loss.
    for (size_t i = 0; i < g_.ops.size(); ++i)
      if (saved_live_[i]) {
        for (TensorId s : g_.ops[i].saved) unsave(s);
        saved_live_[i] = false;
      }
    for (auto& gb : grad_of_)
      if (gb >= 0) { grad_unref(gb); gb = -1; }
    unref(loss);
  }

  StepStats train_step(int32_t step, bool record_layers) {
    StepStats st;
    mem_.here = Location{step, 0, Phase::batch, -1, false};
    mem_.reset_peak();
    st.start = mem_.current_bytes();
    st.event_begin = mem_.event_count();
    const int32_t n_ops = static_cast<int32_t>(g_.ops.size());
    for (int64_t mb = 0; mb < cfg_.grad_accum_steps; ++mb) {
      mem_.here.micro_batch = static_cast<int32_t>(mb);
      mem_.here.phase = Phase::batch;
      mem_.reset_window();
      std::vector<TensorId> inputs;
      for (size_t t = 0; t < g_.tensors.size(); ++t)
        if (g_.tensors[t].kind == TensorKind::input) {
          inputs.push_back(static_cast<TensorId>(t));
          create(static_cast<TensorId>(t));
        }
      if (mb == 0) st.batch = mem_.current_bytes();
      saved_live_.assign(g_.ops.size(), false);
      mem_.here.phase = Phase::forward;
      forward(n_ops, record_layers && mb == 0 ? &layer_stats_ : nullptr);
      const int64_t fwd_peak = mem_.window_peak();
      if (mb == 0) { st.fwd_peak = fwd_peak; st.after_fwd = mem_.current_bytes(); }
      mem_.here.phase = Phase::backward;
      mem_.reset_window();
      backward();
      if (mb == 0) st.bwd_peak = mem_.window_peak();
      st.micro_rest_peak = std::max({st.micro_rest_peak, fwd_peak, mem_.window_peak()});
      for (TensorId t : inputs) unref(t);
    }
    st.after_bwd = mem_.current_bytes();
    mem_.here.phase = Phase::optimizer;
    mem_.here.op = -1;
    mem_.reset_window();
    hook([](dist::RankHooks& h, dist::ReplayState& s) { h.before_optimizer(s); });
    session_.optimizer.step(mem_, session_.params);
    hook([](dist::RankHooks& h, dist::ReplayState& s) { h.after_optimizer(s); });
    st.opt_peak = mem_.window_peak();
    mem_.here.phase = Phase::zero_grad;
    hook([](dist::RankHooks& h, dist::ReplayState& s) { h.zero_grad(s); });
    for (auto& pg : session_.param_grad)
      if (pg >= 0) { mem_.free(pg); pg = -1; }
    st.end = mem_.current_bytes();
    st.event_end = mem_.event_count();
    st.peak = mem_.peak();
    st.step_peak = st.peak.bytes;
    return st;
  }

  struct GradBlock {
    int32_t block;
    int32_t refs;
    bool view;  // GradSpec::arrives_as_view: never accumulated into in place
  };

  const Graph& g_;
  const RunConfig& cfg_;
  // By Graph::names index: whether an op of that name runs a GEMM (linear, addmm, matmul) and whether it is an
  // addmm, so that maybe_workspace, called for every op, reads a byte instead of comparing strings.
  static constexpr uint8_t kGemm = 1, kAddmm = 2;
  std::vector<uint8_t> name_kind_;
  const ReplayOptions& opt_;
  ReplaySession& session_;
  MemoryTracker& mem_;
  std::vector<int32_t> ordinal_;  // parameter / buffer ordinal of a tensor, -1 for others
  std::vector<int32_t> refs_, saved_refs_, block_, grad_of_;
  // Trainable parameters: gradient-producing reads in the graph (AccumulateGrad's input edges), and how many
  // arrived in the current backward.
  std::vector<int32_t> param_edges_, param_arrivals_;
  std::vector<GradBlock> gblocks_;
  struct Span {
    const TensorId* b;
    const TensorId* e;
    const TensorId* begin() const { return b; }
    const TensorId* end() const { return e; }
  };
  Span releases_at(int32_t op) const {
    const auto i = static_cast<size_t>(op);
    return {release_flat_.data() + release_start_[i], release_flat_.data() + release_start_[i + 1]};
  }
  std::vector<int32_t> release_start_;
  std::vector<TensorId> release_flat_;
  std::vector<int32_t> layer_of_op_;
  std::vector<std::vector<TensorId>> region_inputs_;
  std::vector<int32_t> recompute_end_;
  std::vector<int32_t> inputs_release_op_;  // per checkpointed layer: the op whose backward releases its inputs
  std::vector<bool> recompute_stops_at_inputs_;  // the last saver saves only its inputs (see forward_op)
  std::vector<bool> saved_live_;
  std::vector<TensorId> cache_live_;
  std::vector<LayerStats> layer_stats_;
  struct Produced {
    TensorId input;
    int32_t grad;            // gradient block
    int64_t cast_to_bytes;   // > 0: validate_outputs casts / reduces it (GradSpec::cast_to_bytes)
    const GradSpec* spec;
  };
  std::vector<Produced> produced_scratch_;
  std::vector<int32_t> pre_temp_scratch_;
  mutable std::vector<int32_t> creator_;
};

}  // namespace

ReplayResult replay_training(const Graph& g, const RunConfig& cfg, const ReplayOptions& opt, MemoryTracker::Storage* lent) {
  std::vector<const Graph*> steps(static_cast<size_t>(std::max(1, opt.steps)), &g);
  return replay_training_sequence(steps, cfg, opt, lent);
}

ReplayResult replay_training_sequence(const std::vector<const Graph*>& step_graphs, const RunConfig& cfg,
                                      const ReplayOptions& opt, MemoryTracker::Storage* lent) {
  ReplaySession session(cfg, lent ? std::move(*lent) : MemoryTracker::Storage{});
  session.mem.record_timeline(opt.record_timeline);
  size_t total_ops = 0;
  for (const Graph* g : step_graphs) total_ops += g->ops.size();
  session.mem.reserve(total_ops * 8);
  // One Replayer per distinct graph: its precomputed lists are reused by every step of that shape.
  std::vector<std::pair<const Graph*, std::unique_ptr<Replayer>>> replayers;
  ReplayResult res;
  // A step of the same graph as the previous one, from the third on, that starts from the previous step's
  // Start (Replayer::start) after a previous step that left the tracker's live set and rows as it found them,
  // is not replayed: it repeats the previous step (Replayer::repeat_step). Not with a strategy's hooks (their
  // own state) or a timeline (per-event locations).
  const bool may_repeat = opt.repeat_steps && !opt.rank_hooks && !opt.record_timeline;
  Replayer::Start prev_start;
  bool have_prev_start = false;
  for (size_t s = 0; s < step_graphs.size(); ++s) {
    const Graph* g = step_graphs[s];
    auto it = std::find_if(replayers.begin(), replayers.end(), [&](const auto& p) { return p.first == g; });
    if (it == replayers.end()) {
      replayers.emplace_back(g, std::make_unique<Replayer>(*g, cfg, opt, session));
      it = replayers.end() - 1;
    }
    Replayer& r = *it->second;
    r.bind_parameters();
    if (s == 0) res.weights_bytes = session.mem.current_bytes();
    const bool last = s + 1 == step_graphs.size();
    const bool same_graph_as_prev = s > 0 && step_graphs[s - 1] == g;
    const bool same_graph_next = !last && step_graphs[s + 1] == g;
    bool repeated = false;
    if (may_repeat && (same_graph_as_prev || same_graph_next)) {
      Replayer::Start cur = r.start();
      if (s >= 2 && same_graph_as_prev && have_prev_start && !session.mem.old_rows_changed() &&
          session.mem.span_closed(prev_start.event, cur.event, prev_start.first_block) &&
          Replayer::same_start(prev_start, cur)) {
        r.first_block_of_prev_ = prev_start.first_block;
        res.steps.push_back(r.repeat_step(static_cast<int32_t>(s + 1), res.steps.back()));
        repeated = true;
        ++res.repeated_steps;
      }
      prev_start = std::move(cur);
      have_prev_start = true;
    } else {
      have_prev_start = false;
    }
    session.mem.mark_old_blocks();
    // The layers are the last step's; a replayed step that later steps may all repeat records them too.
    const bool same_graph_to_end =
        std::all_of(step_graphs.begin() + static_cast<std::ptrdiff_t>(s), step_graphs.end(), [&](const Graph* x) { return x == g; });
    if (!repeated) res.steps.push_back(r.step(static_cast<int32_t>(s + 1), last || (may_repeat && same_graph_to_end)));
    if (last) res.layers = r.take_layers();
  }
  res.peak = res.steps.back().peak;
  res.events = session.mem.take_events();
  if (lent) lent->blocks = session.mem.take_blocks();
  res.timeline = session.mem.timeline();
  res.timeline_where = session.mem.timeline_where();
  res.timeline_ledgers = session.mem.timeline_ledgers();
  return res;
}

}  // namespace memplan
