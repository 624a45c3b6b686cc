// Tensor parallel as the measurements run it (calibrate/dist_harness.py: torchtitan's plan on HF Llama modules):
// the local shard graph (plan::local_shard: heads, kv heads and intermediate / tp) with the vocabulary-sized
// parameters sharded but the logits whole. embed_tokens is RowwiseParallel(input_layouts=Replicate()) (rows =
// vocabulary / tp, output all-reduced) and lm_head ColwiseParallel(output_layouts=Replicate()) (its [B, S, V/tp]
// output all-gathered into a fresh full [B, S, V] on every rank, then HF's loss on the full logits: no
// loss_parallel). So the graph is built with the full vocabulary and tensor_parallel_rewrite() cuts the vocabulary-row
// parameters (and their gradients and autocast copies) to this rank's torch.chunk rows, ceil(V / tp) on rank 0.
//
// Stages of the rewrite (tensor_parallel_rewrite, then shard_sequence with sequence parallel), each an op inserted into
// the built graph (Inserter), checked event by event against recordings/distributed1 (NOTES.md, "TP"):
//   1. collectives (insert_collectives): the functional collectives return fresh tensors. After the embedding and
//      every row-parallel linear (o_proj, down_proj) an all_reduce op allocates a new [B, S, H] and the local
//      partial dies with the module's other locals (Python frees them when the module returns, after the output
//      hook); backward passes the gradient through. The lm_head's local [B, S, V/tp] is all-gathered
//      (all_gather_into_tensor's [tp x B, S, V/tp], then the chunk_cat into [B, S, V]); its backward copies this
//      rank's chunk of the logits' gradient (_select_split_tensor). Each column-parallel linear's input enters
//      through its own DTensor.from_local (a view), made before F.linear's autocast casts, whose backward
//      all-reduces the linear's Partial input gradient into a fresh tensor.
//   2. embedding gradient: embedding_dense_backward on a Replicate gradient gives a Replicate [V, H] .grad for the
//      Shard(0) weight (not cut); the strategies redistribute it (replicate_grad_params: TpOnly in the foreach
//      optimizer, FSDP2 in unsharded_grad_data).
//   3. norms (dtensor_norms): they run on DTensors, and autograd never accumulates into a tensor subclass in
//      place: where two gradients meet inside a norm the sum is a fresh tensor.
//   4. sequence parallel (sequence_collectives, then the cut): the decoder layers take and return [B, S/tp, H];
//      the norms run on sequence shards; PrepareModuleInput all-gathers the attention / MLP / head input once for
//      its column-parallel linears (backward: reduce-scatter of the summed gradient); o / down reduce-scatter
//      back to [B, S/tp, H] (backward: all-gather); layer 0 copies its chunk of the replicated embedding output.
//      In the graph: every tensor a layer's ops create from its start, and again after a row-parallel linear
//      (output width = hidden), up to the next linear is cut to S/tp along its sequence dimension, except the
//      gathered tensors; the final norm likewise up to the head. Gradients of cut tensors are cut alike.
// Not modelled: the optimizer's redistribution copies come before its state in step 1 (the recording: after
// _init_group; no hook inside optimizer.step()); three gradients meeting in a DTensor buffer (SP's q / k / v) are
// summed once out of place here, twice in torch; optimizers other than foreach Adam / AdamW with a Replicate
// .grad; MoE routers and LoRA adapters under TP (their linears are classified by shape alone).
#include <algorithm>
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "engine/checked.h"
#include "engine/dist/dist.h"

namespace memplan::dist {

namespace {

int32_t intern(Graph& g, const char* name) {
  for (size_t i = 0; i < g.names.size(); ++i)
    if (g.names[i] == name) return static_cast<int32_t>(i);
  g.names.emplace_back(name);
  return static_cast<int32_t>(g.names.size() - 1);
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n = checked_mul(n, d, "tensor elements");
  return n;
}

// Ops inserted into a built graph in one pass. Positions and Python release points are given in the old op
// numbering (an inserted op goes right before old op `before`, in the order of the calls for one position);
// apply() renumbers the ops, the layers' ranges, py_release_op, autocast_exit_op and model_end_op.
class Inserter {
 public:
  explicit Inserter(Graph& g) : g_(g) {}
  // Returns a handle for release_after().
  size_t insert_before(int32_t before, Op op) {
    ins_.push_back({before, std::move(op)});
    return ins_.size() - 1;
  }
  // Tensor t's Python reference dies right after inserted op `handle`.
  void release_after(TensorId t, size_t handle) { release_.emplace_back(t, handle); }
  TensorId add_tensor(const TensorInfo& t, int32_t release_op) {
    g_.tensors.push_back(t);
    const auto id = static_cast<TensorId>(g_.tensors.size() - 1);
    if (g_.tensors.back().storage == kNoTensor) g_.tensors.back().storage = id;
    g_.py_release_op.push_back(release_op);
    return id;
  }
  void apply() {
    if (ins_.empty()) return;
    const auto n = static_cast<int32_t>(g_.ops.size());
    std::vector<size_t> order(ins_.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ins_[a].before < ins_[b].before; });
    std::vector<Op> ops;
    ops.reserve(g_.ops.size() + ins_.size());
    std::vector<int32_t> remap(static_cast<size_t>(n) + 1, 0), placed(ins_.size(), 0);
    size_t k = 0;
    for (int32_t i = 0; i <= n; ++i) {
      for (; k < order.size() && ins_[order[k]].before == i; ++k) {
        placed[order[k]] = static_cast<int32_t>(ops.size());
        ops.push_back(std::move(ins_[order[k]].op));
      }
      remap[static_cast<size_t>(i)] = static_cast<int32_t>(ops.size());
      if (i < n) ops.push_back(std::move(g_.ops[static_cast<size_t>(i)]));
    }
    g_.ops = std::move(ops);
    for (int32_t& r : g_.py_release_op)
      if (r >= 0 && r < n) r = remap[static_cast<size_t>(r)];
    for (const auto& [t, h] : release_) g_.py_release_op[static_cast<size_t>(t)] = placed[h];
    if (g_.autocast_exit_op >= 0) g_.autocast_exit_op = remap[static_cast<size_t>(g_.autocast_exit_op)];
    g_.model_end_op = remap[static_cast<size_t>(std::min(g_.model_end_op, n))];
    for (size_t l = 0; l < g_.layers.size(); ++l) {  // contiguous: an inserted op carries its neighbour's layer
      LayerInfo& L = g_.layers[l];
      int32_t lo = INT32_MAX, hi = -1;
      for (int32_t i = 0; i < static_cast<int32_t>(g_.ops.size()); ++i)
        if (g_.ops[static_cast<size_t>(i)].layer == static_cast<int32_t>(l)) lo = std::min(lo, i), hi = i;
      if (hi >= 0) L.first_op = lo, L.end_op = hi + 1;
    }
    ins_.clear();
    release_.clear();
  }

 private:
  struct Ins {
    int32_t before;
    Op op;
  };
  Graph& g_;
  std::vector<Ins> ins_;
  std::vector<std::pair<TensorId, size_t>> release_;
};

template <typename Ids>
void replace_in(Ids& v, TensorId from, TensorId to) {
  for (TensorId& t : v)
    if (t == from) t = to;
}
// Op `i` reads `to` where it read `from` (and saves and differentiates it).
void redirect_op(Op& op, TensorId from, TensorId to) {
  replace_in(op.reads, from, to);
  replace_in(op.saved, from, to);
  for (GradSpec& gs : op.grads)
    if (gs.input == from) gs.input = to;
}
// A DTensor.from_local view of activation x (no memory), inserted before old op `before` in `layer` and alive up to
// old op `last`; its backward hands x the gradient `grad` describes (the view's only GradSpec; its input is x).
// Returns the view, for the ops that read it instead of x.
TensorId insert_from_local(Graph& g, Inserter& ins, int32_t from_local, TensorId x, int32_t before, int32_t layer,
                           int32_t last, GradSpec grad) {
  TensorInfo v = g.tensors[static_cast<size_t>(x)];
  v.bytes = 0;
  const TensorId view = ins.add_tensor(v, last);
  Op op;
  op.name = from_local;
  op.layer = layer;
  op.reads = {x};
  op.outs = {view};
  op.has_backward = true;
  grad.input = x;
  op.grads.push_back(grad);
  ins.insert_before(before, std::move(op));
  return view;
}

// Every op after `after` reads `to` where it read `from`.
void redirect_after(Graph& g, int32_t after, TensorId from, TensorId to) {
  for (size_t i = static_cast<size_t>(after) + 1; i < g.ops.size(); ++i) redirect_op(g.ops[i], from, to);
}

// Norms run on DTensors (the harness's Replicate wrapper; SequenceParallel's Shard(1)): autograd's InputBuffer
// never accumulates a tensor subclass in place (input_buffer.cpp can_accumulate_inplace), so where two gradients
// of one tensor meet inside a norm (RMSNorm's fp32 input: pow and the product) they are summed into a fresh
// tensor. A norm: a `mul` by a [hidden] parameter and the ops before it whose outputs only the norm reads; its
// outside activation inputs enter through a from_local view whose backward hands the gradient on.
void dtensor_norms(Graph& g, int64_t hidden) {
  const int32_t mul = intern(g, "mul"), from_local = intern(g, "from_local");
  std::vector<std::vector<int32_t>> readers(g.tensors.size());
  std::vector<int32_t> creator(g.tensors.size(), -1);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (TensorId r : g.ops[i].reads) readers[static_cast<size_t>(r)].push_back(static_cast<int32_t>(i));
    for (TensorId o : g.ops[i].outs) creator[static_cast<size_t>(o)] = static_cast<int32_t>(i);
  }
  Inserter ins(g);
  for (int32_t m = 0; m < static_cast<int32_t>(g.ops.size()); ++m) {
    const Op& end = g.ops[static_cast<size_t>(m)];
    if (end.name != mul) continue;
    bool norm_weight = false;
    for (TensorId r : end.reads) {
      const TensorInfo& t = g.tensors[static_cast<size_t>(r)];
      norm_weight = norm_weight || (t.kind == TensorKind::param && t.shape.size() == 1 && t.shape[0] == hidden);
    }
    if (!norm_weight) continue;
    int32_t start = m;
    for (int32_t j = m - 1; j >= 0; --j) {
      const Op& op = g.ops[static_cast<size_t>(j)];
      if (op.layer != end.layer || op.outs.empty()) break;
      bool inside = true;
      for (TensorId o : op.outs)
        for (int32_t r : readers[static_cast<size_t>(o)]) inside = inside && r > j && r <= m;
      if (!inside) break;
      start = j;
    }
    if (start == m) continue;
    // Only where gradients meet: a flag on a lone gradient would travel on through pass-throughs (to_local
    // hands the region's input gradient on as an accumulable tensor).
    std::vector<std::pair<TensorId, int>> meets;
    for (int32_t j = start; j <= m; ++j)
      for (const GradSpec& gs : g.ops[static_cast<size_t>(j)].grads) {
        auto it = std::find_if(meets.begin(), meets.end(), [&](const auto& e) { return e.first == gs.input; });
        if (it == meets.end()) meets.emplace_back(gs.input, 1);
        else ++it->second;
      }
    for (int32_t j = start; j <= m; ++j)
      for (GradSpec& gs : g.ops[static_cast<size_t>(j)].grads) {
        const auto it = std::find_if(meets.begin(), meets.end(), [&](const auto& e) { return e.first == gs.input; });
        if (gs.alias_out < 0 && it->second > 1 && g.tensors[static_cast<size_t>(gs.input)].kind == TensorKind::activation)
          gs.arrives_as_view = true;
      }
    std::vector<TensorId> outside;
    for (int32_t j = start; j <= m; ++j)
      for (TensorId r : g.ops[static_cast<size_t>(j)].reads) {
        const TensorInfo& t = g.tensors[static_cast<size_t>(r)];
        if (t.kind == TensorKind::activation && creator[static_cast<size_t>(r)] < start && t.requires_grad &&
            std::find(outside.begin(), outside.end(), r) == outside.end())
          outside.push_back(r);
      }
    for (TensorId x : outside) {
      int32_t last = start;
      for (int32_t r : readers[static_cast<size_t>(x)])
        if (r >= start && r <= m) last = r;
      const TensorId view = insert_from_local(g, ins, from_local, x, start, end.layer, last, {x, 0, 0});
      for (int32_t j = start; j <= m; ++j) redirect_op(g.ops[static_cast<size_t>(j)], x, view);
    }
  }
  ins.apply();
}

// The functional collectives DTensor runs around the parallelised modules (file comment): an out-of-place
// all-reduce after the embedding and every row-parallel linear, the lm_head's all-gather, and the all-reduce of
// every column-parallel linear's input gradient (the backward of its input's DTensor.from_local). Row-parallel:
// a linear inside a layer reading [.., hidden / tp] and writing [.., hidden]; column-parallel: the other linears
// of a layer reading [.., hidden], and the lm_head. The graph's layers are those of a local shard.
void insert_collectives(Graph& g, int64_t vocab, int64_t tp, const std::vector<bool>& vocab_param) {
  const int32_t embedding = intern(g, "embedding"), linear = intern(g, "linear"), addmm = intern(g, "addmm");
  const int32_t to_copy = intern(g, "to_copy"), all_reduce = intern(g, "all_reduce");
  const int32_t all_gather = intern(g, "all_gather"), from_local = intern(g, "from_local");
  const int64_t rows = (vocab + tp - 1) / tp;
  std::vector<int32_t> creator(g.tensors.size(), -1);
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (TensorId o : g.ops[i].outs) creator[static_cast<size_t>(o)] = static_cast<int32_t>(i);
  int64_t hidden = 0;
  for (const Op& op : g.ops)
    if (op.name == embedding && op.reads.size() >= 2 && vocab_param[static_cast<size_t>(op.reads[1])]) {
      hidden = g.tensors[static_cast<size_t>(op.outs[0])].shape.back();
      break;
    }
  if (hidden <= 0) return;
  auto param_of = [&](TensorId w) {
    const TensorInfo& t = g.tensors[static_cast<size_t>(w)];
    return t.autocast_cache && t.cast_of != kNoTensor ? t.cast_of : w;
  };
  // Python frees what a module's forward drops only once the module returns, after its output hook's
  // collective: references dropped after op i move behind the collective inserted after it.
  std::vector<std::vector<TensorId>> released_at(g.ops.size());
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const int32_t r = g.py_release_op[t];
    if (r >= 0 && r < static_cast<int32_t>(g.ops.size()) && g.tensors[t].kind == TensorKind::activation)
      released_at[static_cast<size_t>(r)].push_back(static_cast<TensorId>(t));
  }
  Inserter ins(g);
  auto release_behind = [&](int32_t i, size_t h) {
    for (TensorId t : released_at[static_cast<size_t>(i)]) ins.release_after(t, h);
  };
  // A fresh copy of op i's output `src` replaces it for every later reader; `src` dies after the collective,
  // whose backward passes the gradient through (Partial -> Replicate's backward communicates nothing).
  auto all_reduce_after = [&](int32_t i, TensorId src) {
    TensorInfo out = g.tensors[static_cast<size_t>(src)];
    out.storage = kNoTensor;
    const TensorId dst = ins.add_tensor(out, g.py_release_op[static_cast<size_t>(src)]);
    redirect_after(g, i, src, dst);
    for (size_t t = 0; t < creator.size(); ++t)  // views of src taken later view dst
      if (g.tensors[t].storage == src && static_cast<TensorId>(t) != src && creator[t] > i) g.tensors[t].storage = dst;
    Op op;
    op.name = all_reduce;
    op.layer = g.ops[static_cast<size_t>(i)].layer;
    op.reads = {src};
    op.outs = {dst};
    op.has_backward = out.requires_grad;
    if (op.has_backward) op.grads.push_back({src, 0, 0});
    const size_t h = ins.insert_before(i + 1, std::move(op));
    release_behind(i, h);
    ins.release_after(src, h);
  };
  // The backward of the input's DTensor.from_local: the linear's Partial input gradient all-reduced into a
  // fresh tensor, the partial freed. A view op in forward (no memory).
  auto colwise_input = [&](int32_t j) {
    TensorId src = g.ops[static_cast<size_t>(j)].reads[0];
    int32_t target = j;
    const int32_t c = creator[static_cast<size_t>(src)];
    const TensorInfo& xi = g.tensors[static_cast<size_t>(src)];
    if (c >= 0 && g.ops[static_cast<size_t>(c)].name == to_copy && xi.kind == TensorKind::activation && !xi.autocast_cache) {
      target = c;  // autocast's cast of the input runs inside F.linear, on the DTensor from_local made
      src = g.ops[static_cast<size_t>(c)].reads[0];
    }
    // F.linear's autocast casts (bias, weight, then input) are all made after the module's pre-hook ran
    // from_local, so its backward comes after theirs (autograd runs later-created nodes first).
    const Op& lin = g.ops[static_cast<size_t>(j)];
    int32_t before = target;
    while (before > 0) {
      bool cast_of_arg = false;
      for (TensorId o : g.ops[static_cast<size_t>(before - 1)].outs)
        for (size_t r = 1; r < lin.reads.size(); ++r) cast_of_arg = cast_of_arg || o == lin.reads[r];
      if (!cast_of_arg || g.ops[static_cast<size_t>(before - 1)].name != to_copy) break;
      --before;
    }
    const TensorInfo& si = g.tensors[static_cast<size_t>(src)];
    if (!si.requires_grad) return;
    const GradSpec fresh{src, -1, checked_mul(numel(si.shape), dtype_bytes(si.dtype), "gradient bytes")};
    const TensorId view =
        insert_from_local(g, ins, from_local, src, before, g.ops[static_cast<size_t>(target)].layer, target, fresh);
    redirect_op(g.ops[static_cast<size_t>(target)], src, view);
  };
  const auto n = static_cast<int32_t>(g.ops.size());
  for (int32_t i = 0; i < n; ++i) {
    const Op& op = g.ops[static_cast<size_t>(i)];
    if (op.reads.size() < 2 || op.outs.empty()) continue;
    const TensorId out = op.outs[0];
    const TensorInfo oi = g.tensors[static_cast<size_t>(out)];
    if (op.name == embedding && vocab_param[static_cast<size_t>(op.reads[1])]) {
      all_reduce_after(i, out);  // MaskPartial lookup on the local rows, then all_reduce
      continue;
    }
    if (op.name != linear && op.name != addmm) continue;
    const TensorId w = param_of(op.reads[1]);
    const TensorInfo& wi = g.tensors[static_cast<size_t>(w)];
    if (wi.kind != TensorKind::param || wi.shape.size() != 2 || oi.shape.empty()) continue;
    if (vocab_param[static_cast<size_t>(w)]) {
      // lm_head: the local [B, S, V / tp] logits, all_gather_into_tensor's [tp x B, S, V / tp], then the
      // chunk_cat into the full [B, S, V] (the graph's logits); backward: _select_split_tensor copies this
      // rank's [B, S, V / tp] chunk of the logits' gradient.
      TensorInfo local = oi;
      local.storage = kNoTensor;
      local.shape.back() = rows;
      local.bytes = checked_mul(oi.bytes / vocab, rows, "activation bytes");
      TensorInfo raw = local;
      raw.requires_grad = false;
      raw.shape[0] = checked_mul(raw.shape[0], tp, "activation shape");
      raw.bytes = checked_mul(local.bytes, tp, "activation bytes");
      const TensorId l = ins.add_tensor(local, -1);
      const TensorId rw = ins.add_tensor(raw, -1);
      g.ops[static_cast<size_t>(i)].outs[0] = l;
      Op ag;
      ag.name = all_gather;
      ag.layer = g.ops[static_cast<size_t>(i)].layer;
      ag.reads = {l};
      ag.outs = {rw, out};
      ag.has_backward = oi.requires_grad;
      if (ag.has_backward) ag.grads.push_back({l, -1, local.bytes});
      const size_t h = ins.insert_before(i + 1, std::move(ag));
      release_behind(i, h);
      ins.release_after(l, h);
      ins.release_after(rw, h);
      colwise_input(i);
      continue;
    }
    if (g.ops[static_cast<size_t>(i)].layer < 0) continue;
    const TensorInfo& xi = g.tensors[static_cast<size_t>(g.ops[static_cast<size_t>(i)].reads[0])];
    if (xi.shape.empty()) continue;
    if (oi.shape.back() == hidden && xi.shape.back() != hidden) {
      all_reduce_after(i, out);
    } else if (xi.shape.back() == hidden) {
      colwise_input(i);
    }
  }
  ins.apply();
  dtensor_norms(g, hidden);
}

}  // namespace

void tensor_parallel_rewrite(Graph& g, int64_t vocab, int64_t tp) {
  if (tp <= 1 || vocab <= 0) return;
  const int64_t rows = (vocab + tp - 1) / tp;
  std::vector<bool> vocab_param(g.tensors.size(), false);
  auto cut = [&](TensorInfo& t) {
    if (t.bytes > 0) t.bytes = checked_mul(t.bytes / vocab, rows, "parameter bytes");
    t.shape[0] = rows;
  };
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    TensorInfo& t = g.tensors[i];
    if (t.kind != TensorKind::param || t.shape.size() != 2 || t.shape[0] != vocab) continue;
    vocab_param[i] = true;
    cut(t);
  }
  std::vector<bool> vocab_rows = vocab_param;  // and their autocast copies (the head's bf16 weight under amp)
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    TensorInfo& t = g.tensors[i];
    if (t.autocast_cache && t.cast_of != kNoTensor && vocab_param[static_cast<size_t>(t.cast_of)] && !t.shape.empty() &&
        t.shape[0] == vocab) {
      cut(t);
      vocab_rows[i] = true;
    }
  }
  const int32_t embedding = intern(g, "embedding");
  for (Op& op : g.ops)
    for (GradSpec& gs : op.grads) {
      if (!vocab_rows[static_cast<size_t>(gs.input)] || gs.alias_out >= 0) continue;
      // The embedding's backward runs on the replicated gradient of its all-reduced output: a Replicate
      // [V, H] gradient, the parameter's .grad (AccumulateGrad keeps it; see the file comment).
      if (op.name == embedding) continue;
      gs.bytes = checked_mul(gs.bytes / vocab, rows, "gradient bytes");
      if (gs.cast_to_bytes > 0) gs.cast_to_bytes = checked_mul(gs.cast_to_bytes / vocab, rows, "gradient bytes");
    }
  insert_collectives(g, vocab, tp, vocab_param);
}

namespace {

// The collectives of sequence parallel, on the graph insert_collectives left (before the cut below):
//  - a row-parallel output's collective is a reduce_scatter; its backward all-gathers the [B, S/tp, H]
//    gradient: all_gather_into_tensor's [tp x B, S/tp, H] then the chunk_cat into [B, S, H];
//  - the column-parallel linears reading one norm output share PrepareModuleInput's all-gather (raw output,
//    then the [B, S, H] chunk_cat; the norm's own [B, S/tp, H] output stays bound); their gradients meet in
//    the gathered DTensor's buffer, and its backward reduce-scatters the sum into a fresh [B, S/tp, H];
//  - layer 0's PrepareModuleInput(Replicate -> Shard(1)) copies this rank's [B, S/tp, H] chunk of the
//    embedding output; its backward all-gathers the gradient.
// Returns the tensors that stand for gathered [B, S, H] (kept whole by the cut).
std::vector<TensorId> sequence_collectives(Graph& g, int64_t hidden) {
  const int32_t all_reduce = intern(g, "all_reduce"), reduce_scatter = intern(g, "reduce_scatter");
  const int32_t from_local = intern(g, "from_local"), all_gather = intern(g, "all_gather");
  const int32_t view = intern(g, "view"), slice = intern(g, "slice");
  std::vector<TensorId> keep;
  auto nbytes = [&](TensorId t) {
    const TensorInfo& ti = g.tensors[static_cast<size_t>(t)];
    return checked_mul(numel(ti.shape), dtype_bytes(ti.dtype), "activation bytes");
  };
  std::vector<std::pair<TensorId, TensorId>> gathered_of;  // (norm output, its gathered tensor)
  for (size_t i = 0; i < g.ops.size(); ++i) {
    Op& op = g.ops[i];
    if (op.name == all_reduce && op.layer >= 0) {
      op.name = reduce_scatter;
      if (!op.grads.empty()) {
        const int64_t b = nbytes(op.reads[0]);
        op.grads[0] = GradSpec{op.reads[0], -1, b};
        op.bwd_pre_temp_bytes = {b};
      }
      continue;
    }
    if (op.name != from_local || op.grads.empty() || op.grads[0].alias_out >= 0) continue;
    const TensorId src = op.reads[0], out = op.outs[0];
    auto it = std::find_if(gathered_of.begin(), gathered_of.end(), [&](const auto& e) { return e.first == src; });
    if (it != gathered_of.end()) {  // a later reader: a view of the gathered tensor, its gradient handed on
      op.name = view;
      op.reads = {it->second};
      g.tensors[static_cast<size_t>(out)].storage = g.tensors[static_cast<size_t>(it->second)].storage;
      op.grads[0] = GradSpec{it->second, 0, 0};
      continue;
    }
    TensorInfo& gt = g.tensors[static_cast<size_t>(out)];
    gt.storage = out;
    gt.bytes = nbytes(out);
    TensorInfo raw = gt;
    raw.requires_grad = false;
    // all_gather_into_tensor's [tp x B, S/tp, H]: the bytes of [B, S, H]
    g.tensors.push_back(raw);
    const auto rid = static_cast<TensorId>(g.tensors.size() - 1);
    g.tensors.back().storage = rid;
    g.py_release_op.push_back(static_cast<int32_t>(i));
    op.name = all_gather;
    op.outs = {rid, out};
    op.grads[0].bytes = -1;  // the reduce-scatter output: src's bytes once cut (set by the caller)
    gathered_of.emplace_back(src, out);
    keep.push_back(out);
    keep.push_back(rid);
  }
  // Layer 0's input slice.
  if (!g.layers.empty()) {
    const LayerInfo& L0 = g.layers[0];
    std::vector<TensorId> inputs;
    for (int32_t i = L0.first_op; i < L0.end_op; ++i)
      for (TensorId r : g.ops[static_cast<size_t>(i)].reads) {
        const TensorInfo& t = g.tensors[static_cast<size_t>(r)];
        if (t.kind != TensorKind::activation || t.shape.size() < 3 || t.shape.back() != hidden) continue;
        bool outside = true;
        for (int32_t j = L0.first_op; j < L0.end_op && outside; ++j)
          for (TensorId o : g.ops[static_cast<size_t>(j)].outs) outside = outside && o != r;
        if (outside && std::find(inputs.begin(), inputs.end(), r) == inputs.end()) inputs.push_back(r);
      }
    Inserter ins(g);
    for (TensorId e : inputs) {
      TensorInfo sl = g.tensors[static_cast<size_t>(e)];
      sl.storage = kNoTensor;
      const int32_t first = L0.first_op;
      int32_t last = first;
      for (int32_t j = L0.first_op; j < L0.end_op; ++j)
        for (TensorId r : g.ops[static_cast<size_t>(j)].reads)
          if (r == e) last = j;
      const TensorId sid = ins.add_tensor(sl, last);
      for (int32_t j = L0.first_op; j < L0.end_op; ++j) redirect_op(g.ops[static_cast<size_t>(j)], e, sid);
      Op op;
      op.name = slice;
      op.layer = 0;
      op.reads = {e};
      op.outs = {sid};
      op.has_backward = sl.requires_grad;
      if (op.has_backward) {
        op.grads.push_back({e, -1, nbytes(e)});
        op.bwd_pre_temp_bytes = {nbytes(e)};
      }
      ins.insert_before(first, std::move(op));
    }
    ins.apply();
  }
  return keep;
}

}  // namespace

void shard_sequence(Graph& g, int64_t seq_len, int64_t hidden, int64_t tp) {
  if (tp <= 1 || seq_len <= 1) return;
  const int64_t local = (seq_len + tp - 1) / tp;
  const std::vector<TensorId> keep = sequence_collectives(g, hidden);
  std::vector<bool> cut(g.tensors.size(), false), gathered(g.tensors.size(), false);
  for (TensorId t : keep) gathered[static_cast<size_t>(t)] = true;
  std::vector<int32_t> layer_of_op(g.ops.size(), -1);
  for (size_t l = 0; l < g.layers.size(); ++l)
    for (int32_t i = g.layers[l].first_op; i < g.layers[l].end_op; ++i) layer_of_op[static_cast<size_t>(i)] = static_cast<int32_t>(l);
  bool region = false, seen_layer = false;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const int32_t l = layer_of_op[i];
    if (l >= 0 && static_cast<int32_t>(i) == g.layers[static_cast<size_t>(l)].first_op) {
      region = true;
      seen_layer = true;
    }
    if (l < 0 && !seen_layer) continue;  // embedding and rotary tables: whole
    const std::string& name = g.name_of(op.name);
    if (name == "linear" || name == "addmm" || name == "matmul") {
      if (!op.reads.empty()) gathered[static_cast<size_t>(op.reads[0])] = true;
      const auto& out = g.tensors[static_cast<size_t>(op.outs[0])];
      region = l >= 0 && !out.shape.empty() && out.shape.back() == hidden;  // row-parallel: reduce-scatter after
      continue;
    }
    if (region)
      for (TensorId o : op.outs) cut[static_cast<size_t>(o)] = true;
  }
  auto seq_dim = [&](const TensorInfo& t) -> int {
    for (size_t d = 1; d < t.shape.size(); ++d)
      if (t.shape[d] == seq_len) return static_cast<int>(d);
    return -1;
  };
  std::vector<bool> done(g.tensors.size(), false);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    TensorInfo& ti = g.tensors[t];
    if (!cut[t] || gathered[t] || ti.kind != TensorKind::activation) continue;
    const int d = seq_dim(ti);
    if (d < 0) continue;
    ti.shape[static_cast<size_t>(d)] = local;
    if (ti.bytes > 0) ti.bytes = checked_mul(ti.bytes / seq_len, local, "activation bytes");
    done[t] = true;
  }
  for (Op& op : g.ops)
    for (GradSpec& gs : op.grads) {
      if (gs.bytes < 0) {  // sequence_collectives' reduce-scatter output: the input's bytes as cut
        const TensorInfo& in = g.tensors[static_cast<size_t>(gs.input)];
        gs.bytes = checked_mul(numel(in.shape), dtype_bytes(in.dtype), "gradient bytes");
        continue;
      }
      if (!done[static_cast<size_t>(gs.input)] || gs.alias_out >= 0) continue;
      gs.bytes = checked_mul(gs.bytes / seq_len, local, "gradient bytes");
      if (gs.cast_to_bytes > 0) gs.cast_to_bytes = checked_mul(gs.cast_to_bytes / seq_len, local, "gradient bytes");
    }
}

std::vector<bool> replicate_grad_params(const Graph& g) {
  std::vector<int32_t> ordinal(g.tensors.size(), -1);
  int32_t next = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (g.tensors[t].kind == TensorKind::param || g.tensors[t].kind == TensorKind::buffer) ordinal[t] = next++;
  std::vector<bool> out(static_cast<size_t>(next), false);
  for (const Op& op : g.ops) {
    if (g.name_of(op.name) != "embedding") continue;  // broadcast gradients (a norm's weight) are larger too
    for (const GradSpec& gs : op.grads) {
      const TensorInfo& t = g.tensors[static_cast<size_t>(gs.input)];
      if (t.kind == TensorKind::param && t.trainable && gs.alias_out < 0 && gs.bytes > t.bytes)
        out[static_cast<size_t>(ordinal[static_cast<size_t>(gs.input)])] = true;
    }
  }
  return out;
}

namespace {

// Tensor parallel alone: parameters and gradients as the local shard graph has them, nothing wrapped. A
// Replicate .grad of a Shard(0) parameter (the embedding's) is redistributed by every foreach op that reads the
// gradients: torch.optim's _multi_tensor_adam reads them in _foreach_lerp_ (one _select_split_tensor copy of
// this rank's rows, freed when the op returns) and _foreach_addcmul_ (grads twice: two copies alive together),
// before its first temporary.
class TpOnly final : public Strategy {
 public:
  TpOnly(const RunConfig& cfg, const Graph& g) : replicate_(replicate_grad_params(g)) {
    for (const auto& p : index_params(g)) {
      if (p.buffer) continue;
      const int64_t b = checked_mul(p.numel, dtype_bytes(p.dtype), "bytes");
      report_.full_param_bytes = checked_add(report_.full_param_bytes, b, "bytes");
      if (replicate_[static_cast<size_t>(p.ordinal)]) shard_bytes_.push_back(b);
    }
    report_.sharded_param_bytes = report_.full_param_bytes;
    foreach_adam_ = (cfg.optimizer == OptimizerKind::adam || cfg.optimizer == OptimizerKind::adamw) &&
                    cfg.optimizer_impl == OptimizerImpl::foreach;
  }
  bool builds_on_device() const override { return false; }  // meta init, parallelize_module, to_empty
  void before_optimizer(ReplayState& s) override {
    if (!foreach_adam_ || shard_bytes_.empty()) return;
    std::vector<int32_t> live;
    for (int reads : {1, 2}) {  // _foreach_lerp_(exp_avgs, grads), _foreach_addcmul_(exp_avg_sqs, grads, grads)
      for (int k = 0; k < reads; ++k)
        for (int64_t b : shard_bytes_) live.push_back(s.mem.alloc(b, Row::transient));
      for (int32_t b : live) s.mem.free(b);
      live.clear();
    }
  }

 private:
  std::vector<bool> replicate_;      // by ordinal: .grad arrives Replicate (replicate_grad_params)
  std::vector<int64_t> shard_bytes_;  // those parameters' local bytes, in ordinal order
  bool foreach_adam_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_tp_only(const RunConfig& cfg, const Graph& g) { return std::make_unique<TpOnly>(cfg, g); }

}  // namespace memplan::dist
