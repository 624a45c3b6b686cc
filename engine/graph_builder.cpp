// GraphBuilder core: leaves, layers, lifetimes, views, dtype casts and elementwise ops.
// nn ops (linear, norms, attention, loss, convolutions) live in graph_builder_nn.cpp.
#include "engine/graph_builder.h"

#include <algorithm>
#include <cassert>
#include <climits>

#include "engine/checked.h"
#include "engine/errors.h"
#include "engine/limits.h"

namespace memplan {

namespace {
constexpr int32_t kNoRelease = -1;
constexpr int32_t kHeld = -2;
// The module a ModulesToSaveWrapper replaces when one holds `module`'s parameters: the outermost of `module` and
// its ancestors whose key ends with a modules_to_save entry (peft's _set_trainable walks named_modules parents
// first and wraps the whole subtree: RobertaClassificationHead's dense and out_proj live in the copy of
// "classifier"). A classification task's entries count as PeftModelFor{Sequence,Token}Classification adds them
// (lora::task_modules_to_save). Marks the user's entries it matched, which lora::check_matched reads at the end.
// Empty: no wrapper.
std::string_view saved_by_lora(const RunConfig& cfg, lora::Tracker& t, std::string_view module) {
  const LoraConfig& c = cfg.lora;
  t.save_hit.resize(c.modules_to_save.size(), 0);
  const std::vector<std::string_view> task = lora::task_modules_to_save(cfg.task);
  for (size_t end = module.find('.'); ; end = module.find('.', end + 1)) {
    const std::string_view key = module.substr(0, end);
    bool saved = false;
    for (size_t i = 0; i < c.modules_to_save.size(); ++i)
      if (lora::key_ends_with(key, c.modules_to_save[i])) {
        t.save_hit[i] = 1;
        saved = true;
      }
    for (std::string_view entry : task) saved = saved || lora::key_ends_with(key, entry);
    if (saved) return key;
    if (end == std::string_view::npos) return {};
  }
}
// The generic ops that are products of their two reads (GraphBuilder::generic's save rule).
bool is_product(std::string_view name) {
  return name == "mm" || name == "bmm" || name == "matmul" || name == "grouped_mm";
}
}  // namespace

GraphBuilder::GraphBuilder(const RunConfig& cfg) : cfg_(cfg) {
  switch (cfg.precision) {
    case Precision::fp32: param_dtype_ = DType::f32; low_dtype_ = DType::f32; autocast_ = false; break;
    case Precision::amp_bf16: param_dtype_ = DType::f32; low_dtype_ = DType::bf16; autocast_ = true; break;
    case Precision::amp_fp16: param_dtype_ = DType::f32; low_dtype_ = DType::f16; autocast_ = true; break;
    case Precision::bf16: param_dtype_ = DType::bf16; low_dtype_ = DType::bf16; autocast_ = false; break;
    case Precision::fp16: param_dtype_ = DType::f16; low_dtype_ = DType::f16; autocast_ = false; break;
  }
  // Inference under amp_* still runs inside torch.autocast; casts of parameters are never cached there
  // (inference_mode / requires_grad=False), see autocast_low.
}

void GraphBuilder::reserve(size_t ops, size_t tensors) {
  g_.ops.reserve(ops);
  g_.tensors.reserve(tensors);
  explicit_release_.reserve(tensors);
  cache_entry_of_param_.reserve(tensors);
}

int64_t GraphBuilder::numel(TensorId t) const {
  int64_t n = 1;
  for (int64_t d : shape(t)) n = checked_mul(n, d, "tensor numel");
  return n;
}

int64_t GraphBuilder::bytes_of(const Shape& s, DType t) const {
  int64_t n = dtype_bytes(t);
  for (int64_t d : s) {
    if (d < 0) throw InputError("shape", std::to_string(d), "dimensions must be non-negative");
    n = checked_mul(n, d, "tensor bytes");
  }
  return n;
}

DType GraphBuilder::promote(DType a, DType b) const {
  if (a == b) return a;
  if (!is_floating(a)) return b;
  if (!is_floating(b)) return a;
  if (a == DType::f32 || b == DType::f32) return DType::f32;
  return DType::f32;  // bf16 with f16 promotes to f32
}

int32_t GraphBuilder::intern(std::string_view name) {
  // Op names are mostly string literals, passed again and again from the same address: a small table keyed by
  // the characters' address answers those without hashing the name. A hit is checked against the interned name
  // itself, so an address reused for other characters (a temporary string) only misses.
  RecentName& slot = recent_names_[(reinterpret_cast<uintptr_t>(name.data()) >> 3) % kRecentNames];
  if (slot.chars == name.data() && slot.id >= 0 && g_.names[static_cast<size_t>(slot.id)] == name) return slot.id;
  int32_t id;
  if (const auto it = name_index_.find(name); it != name_index_.end()) {
    id = it->second;
  } else {
    id = static_cast<int32_t>(g_.names.size());
    name_index_.emplace(std::string(name), id);
    g_.names.emplace_back(name);
  }
  slot = {name.data(), id};
  return id;
}

TensorId GraphBuilder::new_tensor(Shape shape, DType dtype, TensorKind kind, TensorId storage_of) {
  TensorInfo t;
  t.bytes = storage_of == kNoTensor ? bytes_of(shape, dtype) : 0;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.kind = kind;
  const auto id = static_cast<TensorId>(g_.tensors.size());
  t.storage = storage_of == kNoTensor ? id : g_.tensors[static_cast<size_t>(storage_of)].storage;
  g_.tensors.push_back(std::move(t));
  explicit_release_.push_back(kNoRelease);
  cache_entry_of_param_.push_back(kNoTensor);
  return id;
}

TensorId GraphBuilder::new_param(std::string_view name, Shape shape, bool trainable, DType dtype) {
  TensorId t = new_tensor(std::move(shape), dtype, TensorKind::param);
  auto& ti = g_.tensors.back();
  ti.trainable = trainable && training();
  ti.requires_grad = ti.trainable;
  ti.name = intern(name);
  return t;
}

TensorId GraphBuilder::param(std::string_view name, Shape shape, bool trainable, std::optional<DType> dtype) {
  const DType dt = dtype.value_or(param_dtype_);
  if (cfg_.lora.enabled() && !lora::is_adapter_param(name)) {
    // get_peft_model freezes the base; a modules_to_save module keeps its frozen original (registered first,
    // never read) and trains a deep copy in its place (peft utils/other.py ModulesToSaveWrapper).
    const std::string_view wrapped = saved_by_lora(cfg_, lora_, lora::module_of(name));
    if (wrapped.empty()) return new_param(name, std::move(shape), false, dt);
    const std::string leaf(name.substr(wrapped.size()));
    new_param(std::string(wrapped) + ".original_module" + leaf, shape, false, dt);
    return new_param(std::string(wrapped) + ".modules_to_save.default" + leaf, std::move(shape), trainable, dt);
  }
  return new_param(name, std::move(shape), trainable, dt);
}

TensorId GraphBuilder::tied_param(std::string_view name, TensorId tied_to, bool trainable) {
  if (!cfg_.lora.enabled()) return tied_to;
  const std::string_view wrapped = saved_by_lora(cfg_, lora_, lora::module_of(name));
  if (wrapped.empty()) return tied_to;
  const std::string leaf(name.substr(wrapped.size()));
  return new_param(std::string(wrapped) + ".modules_to_save.default" + leaf, shape(tied_to), trainable, dtype(tied_to));
}

TensorId GraphBuilder::buffer(std::string_view name, Shape shape, DType dtype) {
  TensorId t = new_tensor(std::move(shape), dtype, TensorKind::buffer);
  g_.tensors.back().name = intern(name);
  return t;
}

TensorId GraphBuilder::input(Shape shape, DType dtype) { return new_tensor(std::move(shape), dtype, TensorKind::input); }

TensorId GraphBuilder::kv_cache_in(Shape shape, DType dtype) {
  TensorId t = new_tensor(std::move(shape), dtype, TensorKind::cache);
  g_.tensors.back().bytes = 0;  // the storage belongs to the cache, allocated by an earlier pass
  g_.cache_in.push_back(t);
  return t;
}

void GraphBuilder::kv_cache_out(TensorId t) {
  // Slots fill in update order; an empty slot at pass start (prefill) has no cache_in entry.
  if (g_.cache_in.size() < g_.cache_out.size() + 1) g_.cache_in.push_back(kNoTensor);
  g_.cache_out.push_back(t);
}

void GraphBuilder::begin_layer(std::string_view name, bool checkpointed) {
  assert(current_layer_ < 0 && "layers do not nest");
  LayerInfo l;
  l.name = intern(name);
  l.first_op = static_cast<int32_t>(g_.ops.size());
  l.checkpointed = checkpointed && training();
  g_.layers.push_back(l);
  current_layer_ = static_cast<int32_t>(g_.layers.size() - 1);
}

void GraphBuilder::end_layer() {
  g_.layers[static_cast<size_t>(current_layer_)].end_op = static_cast<int32_t>(g_.ops.size());
  current_layer_ = -1;
}

void GraphBuilder::hold(TensorId t) { explicit_release_[static_cast<size_t>(t)] = kHeld; }

void GraphBuilder::drop(TensorId t) {
  // Released after the most recent op: the variable dies once the statement that rebinds it has run.
  explicit_release_[static_cast<size_t>(t)] = std::max<int32_t>(0, static_cast<int32_t>(g_.ops.size()) - 1);
}

Op& GraphBuilder::new_op(std::string_view name) {
  // Stops a runaway build early (e.g. thousands of layers x thousands of experts), before memory grows.
  if (static_cast<int64_t>(g_.ops.size()) >= kMaxGraphOps)
    throw InputError("model", std::to_string(g_.ops.size()) + " ops",
                     "graph exceeds the limit of " + std::to_string(kMaxGraphOps) + " ops");
  const int32_t interned = intern(name);
  Op& op = g_.ops.emplace_back();
  op.name = interned;
  op.layer = current_layer_;
  return op;
}

Op& GraphBuilder::emit(std::string_view name, std::vector<TensorId> reads) {
  Op& op = new_op(name);
  op.reads = reads;
  return op;
}

Op& GraphBuilder::emit(std::string_view name, std::initializer_list<TensorId> reads) {
  Op& op = new_op(name);
  op.reads = reads;
  return op;
}

void GraphBuilder::finish_outs(Op& op) {
  bool rg = false;
  for (TensorId r : op.reads) rg = rg || info(r).requires_grad;
  rg = rg && training() && grad_enabled_;
  for (TensorId o : op.outs) {
    auto& t = g_.tensors[static_cast<size_t>(o)];
    if (is_floating(t.dtype)) t.requires_grad = rg;
  }
  op.has_backward = rg;
}

void GraphBuilder::add_grads(Op& op, const std::vector<TensorId>& differentiable) {
  for (TensorId t : differentiable) {
    if (t == kNoTensor || !info(t).requires_grad) continue;
    op.grads.push_back({t, -1, bytes_of(shape(t), dtype(t))});
  }
}

// ---------------------------------------------------------------- views and in-place ops

TensorId GraphBuilder::view(TensorId x, Shape s) {
  TensorId v = new_tensor(std::move(s), dtype(x), TensorKind::activation, x);
  Op& op = emit("view", {x});
  op.outs = {v};
  finish_outs(op);
  if (op.has_backward) op.grads.push_back({x, 0, 0});
  return v;
}

void GraphBuilder::unreached_param(TensorId param) {
  auto& ti = g_.tensors[static_cast<size_t>(param)];
  if (ti.kind == TensorKind::param) ti.trainable = false;  // requires_grad stays
}

std::vector<TensorId> GraphBuilder::cut_dead_branch(int32_t first_op) {
  std::vector<TensorId> saved;
  for (size_t i = static_cast<size_t>(std::max(first_op, 0)); i < g_.ops.size(); ++i) {
    Op& op = g_.ops[i];
    for (TensorId t : op.saved) {
      const auto& ti = info(t);
      if (ti.kind != TensorKind::activation || ti.autocast_cache) continue;
      if (std::find(saved.begin(), saved.end(), t) == saved.end()) saved.push_back(t);
    }
    op.saved.clear();
    op.grads.clear();
    op.bwd_temp_bytes.clear();
    op.bwd_pre_temp_bytes.clear();
    op.has_backward = false;
  }
  return saved;
}

TensorId GraphBuilder::expand(TensorId x, Shape s) {
  TensorId v = new_tensor(std::move(s), dtype(x), TensorKind::activation, x);
  Op& op = emit("expand", {x});
  op.outs = {v};
  finish_outs(op);
  if (op.has_backward) op.grads.push_back(passed_through_grad(x, v));
  return v;
}

TensorId GraphBuilder::sum_expand_grad(std::string_view name, TensorId x, Shape s) {
  TensorId y = new_tensor(std::move(s), dtype(x), TensorKind::activation);
  Op& op = emit(name, {x});
  op.outs = {y};
  finish_outs(op);
  if (op.has_backward) {
    GradSpec g{x, 0, 0};
    g.arrives_as_view = true;
    g.narrow_of_out = true;  // the incoming block itself, whatever x's size (grad.expand: a view of it)
    op.grads.push_back(g);
  }
  return y;
}

TensorId GraphBuilder::view_copying_grad(TensorId x, Shape s, int64_t grad_bytes) {
  TensorId v = view(x, std::move(s));
  Op& op = g_.ops.back();
  if (op.has_backward) op.grads[0] = {x, -1, grad_bytes >= 0 ? grad_bytes : info(x).bytes};
  return v;
}

std::vector<TensorId> GraphBuilder::split(TensorId x, int parts, const Shape& each) {
  std::vector<TensorId> views;
  for (int i = 0; i < parts; ++i) views.push_back(new_tensor(each, dtype(x), TensorKind::activation, x));
  Op& op = emit("split", {x});
  for (TensorId v : views) op.outs.push_back(v);
  finish_outs(op);
  if (op.has_backward) add_grads(op, {x});
  return views;
}

std::vector<TensorId> GraphBuilder::split(TensorId x, const std::vector<Shape>& parts) {
  std::vector<TensorId> views;
  for (const Shape& s : parts) views.push_back(new_tensor(s, dtype(x), TensorKind::activation, x));
  Op& op = emit("split", {x});
  for (TensorId v : views) op.outs.push_back(v);
  finish_outs(op);
  if (op.has_backward) add_grads(op, {x});
  return views;
}

TensorId GraphBuilder::select_param(TensorId param, Shape slice_shape, bool grad_arrives_as_view) {
  TensorId v = new_tensor(std::move(slice_shape), dtype(param), TensorKind::activation, param);
  Op& op = emit("select", {param});
  op.outs = {v};
  finish_outs(op);
  if (op.has_backward) {
    add_grads(op, {param});
    if (grad_arrives_as_view)
      for (GradSpec& g : op.grads) g.arrives_as_view = true;
  }
  return v;
}

Op& GraphBuilder::emit_inplace(std::string_view name, TensorId x, std::initializer_list<TensorId> other_reads,
                               TensorId& result) {
  result = new_tensor(shape(x), dtype(x), TensorKind::activation, x);
  std::vector<TensorId> reads{x};
  reads.insert(reads.end(), other_reads.begin(), other_reads.end());
  Op& op = emit(name, reads);
  op.outs = {result};
  finish_outs(op);
  return op;
}

TensorId GraphBuilder::inplace_fresh_grad(std::string_view name, TensorId x, std::initializer_list<TensorId> other_reads,
                                          std::initializer_list<int64_t> bwd_pre_temp_bytes) {
  TensorId r = kNoTensor;
  Op& op = emit_inplace(name, x, other_reads, r);
  for (TensorId t : other_reads) op.saved.push_back(t);
  if (op.has_backward) {
    add_grads(op, {x});
    for (int64_t b : bwd_pre_temp_bytes) op.bwd_pre_temp_bytes.push_back(b);
  }
  return r;
}

TensorId GraphBuilder::inplace_add(TensorId x, TensorId other, int64_t slice_clone_bytes) {
  TensorId r = kNoTensor;
  emit_inplace("add_", x, {other}, r);
  Op& op = g_.ops.back();
  if (!op.has_backward) return r;
  if (info(x).requires_grad) {
    if (slice_clone_bytes < 0) {
      op.grads.push_back({x, 0, 0});
    } else {
      op.grads.push_back({x, -1, bytes_of(shape(x), dtype(x))});
      op.bwd_pre_temp_bytes.push_back(slice_clone_bytes);
    }
  }
  if (info(other).requires_grad) {
    GradSpec g = passed_through_grad(other, r);
    g.input_slot = 1;
    g_.ops.back().grads.push_back(g);
  }
  return r;
}

TensorId GraphBuilder::inplace(std::string_view name, TensorId x, bool saves_result,
                               std::initializer_list<TensorId> other_reads) {
  TensorId r = kNoTensor;
  Op& op = emit_inplace(name, x, other_reads, r);
  if (saves_result) op.saved.push_back(r);
  if (op.has_backward) {
    if (saves_result) {
      add_grads(op, {x});  // e.g. relu_: threshold_backward writes a fresh gradient
    } else {
      for (TensorId t : op.reads)  // e.g. add_: the gradient passes through to every operand
        if (info(t).requires_grad) op.grads.push_back({t, 0, 0});
    }
  }
  return r;
}

// ---------------------------------------------------------------- dtype

TensorId GraphBuilder::to(TensorId x, DType dt) {
  if (dtype(x) == dt) return x;
  TensorId y = new_tensor(shape(x), dt, TensorKind::activation);
  Op& op = emit("to_copy", {x});
  op.outs = {y};
  finish_outs(op);
  if (op.has_backward) add_grads(op, {x});  // ToCopyBackward: gradient cast back to x's dtype
  return y;
}

TensorId GraphBuilder::autocast_low(TensorId x) {
  if (!autocast_ || x == kNoTensor || !is_floating(dtype(x)) || dtype(x) == low_dtype_) return x;
  const auto& xi = info(x);
  // The autocast cache holds casts of leaf tensors that require grad (trainable parameters) until the
  // outermost autocast region exits; everything else is cast afresh at every use.
  if (xi.kind == TensorKind::param && xi.requires_grad) {
    const TensorId cached = cache_entry_of_param_[static_cast<size_t>(x)];
    if (cached != kNoTensor) return cached;
    TensorId y = to(x, low_dtype_);  // grows the per-tensor tables: index them afresh below
    g_.ops.back().autocast_cast = true;
    auto& yi = g_.tensors[static_cast<size_t>(y)];
    yi.autocast_cache = true;
    yi.cast_of = x;
    cache_entry_of_param_[static_cast<size_t>(x)] = y;
    return y;
  }
  const TensorId y = to(x, low_dtype_);
  g_.ops.back().autocast_cast = true;
  return y;
}

TensorId GraphBuilder::autocast_fp32(TensorId x) {
  if (!autocast_ || x == kNoTensor || dtype(x) == DType::f32 || !is_floating(dtype(x))) return x;
  const TensorId y = to(x, DType::f32);
  g_.ops.back().autocast_cast = true;
  return y;
}

// ---------------------------------------------------------------- elementwise

namespace {
Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1)
      throw InputError("shape", std::to_string(da) + " vs " + std::to_string(db), "shapes do not broadcast");
    out[i] = std::max(da, db);
  }
  return out;
}
}  // namespace

TensorId GraphBuilder::binary(std::string_view name, TensorId a, TensorId b, bool save_a, bool save_b) {
  Shape s = broadcast(shape(a), shape(b));
  TensorId y = new_tensor(s, promote(dtype(a), dtype(b)), TensorKind::activation);
  Op& op = emit(name, {a, b});
  op.outs = {y};
  finish_outs(op);
  if (save_a) op.saved.push_back(a);
  if (save_b) op.saved.push_back(b);
  if (op.has_backward) {
    // MulBackward0 computes `other`'s gradient before `self`'s (whole-run stream, RMSNorm `weight * x`: x's
    // gradient is the block that outlives the node, the weight's full-size product the one freed after its
    // column sum) - the autograd codegen's order, as for mm and bmm (mat2 first); validate_outputs then
    // casts / reduces them in input order (MoE `proj * routing_weight`: proj's cast before the weight's sum).
    const bool other_first = name == "mul";
    const TensorId order[2] = {other_first ? b : a, other_first ? a : b};
    for (TensorId t : order) {
      if (!info(t).requires_grad) continue;
      GradSpec g = fresh_elementwise_grad(t, y);
      g.input_slot = t == a ? 0 : 1;
      op.grads.push_back(g);
    }
  }
  return y;
}

TensorId GraphBuilder::add(TensorId a, TensorId b) {
  Shape s = broadcast(shape(a), shape(b));
  TensorId y = new_tensor(s, promote(dtype(a), dtype(b)), TensorKind::activation);
  Op& op = emit("add", {a, b});
  op.outs = {y};
  finish_outs(op);
  if (op.has_backward) {
    for (TensorId t : {a, b})
      if (info(t).requires_grad) op.grads.push_back(passed_through_grad(t, y));
  }
  return y;
}

TensorId GraphBuilder::sub(TensorId a, TensorId b) {
  Shape s = broadcast(shape(a), shape(b));
  TensorId y = new_tensor(s, promote(dtype(a), dtype(b)), TensorKind::activation);
  Op& op = emit("sub", {a, b});
  op.outs = {y};
  finish_outs(op);
  if (op.has_backward) {
    if (info(a).requires_grad) op.grads.push_back(passed_through_grad(a, y));
    if (info(b).requires_grad) {  // -grad
      GradSpec g = fresh_elementwise_grad(b, y);
      g.input_slot = 1;
      op.grads.push_back(g);
    }
  }
  return y;
}

GradSpec GraphBuilder::passed_through_grad(TensorId t, TensorId y) {
  GradSpec g{t, 0, 0};
  if (dtype(t) != dtype(y) || shape(t) != shape(y)) {  // reduced (sum_to) and / or cast by validate_outputs
    g.cast_to_bytes = bytes_of(shape(t), dtype(t));
    set_reduce_workspace(g, t, y);
  }
  return g;
}

GradSpec GraphBuilder::fresh_elementwise_grad(TensorId t, TensorId y) {
  GradSpec g{t, -1, bytes_of(shape(t), dtype(t))};
  // The gradient is computed full-size in the promoted dtype; the engine's validate_outputs sums a broadcast
  // operand's back to its shape and casts a mixed-dtype one (bf16 * fp32 under autocast) once the node has
  // returned both (traces: fp32, fp32, bf16 cast, fp32 freed; RMSNorm weight: product, other gradient,
  // column-sum workspace, product freed).
  if (numel(t) < numel(y) || dtype(t) != dtype(y)) {
    g.cast_to_bytes = g.bytes;
    g.bytes = bytes_of(shape(y), dtype(y));
    set_reduce_workspace(g, t, y);
  }
  return g;
}

TensorId GraphBuilder::scalar_op(std::string_view name, TensorId x, bool save_x) {
  TensorId y = new_tensor(shape(x), dtype(x), TensorKind::activation);
  Op& op = emit(name, {x});
  op.outs = {y};
  finish_outs(op);
  if (save_x) op.saved.push_back(x);
  if (op.has_backward) add_grads(op, {x});
  return y;
}

TensorId GraphBuilder::add_scalar(TensorId x) {
  TensorId y = new_tensor(shape(x), dtype(x), TensorKind::activation);
  Op& op = emit("add_scalar", {x});
  op.outs = {y};
  finish_outs(op);
  if (op.has_backward) op.grads.push_back({x, 0, 0});
  return y;
}

TensorId GraphBuilder::pow_scalar(TensorId x) {
  x = autocast_fp32(x);
  TensorId y = new_tensor(shape(x), dtype(x), TensorKind::activation);
  Op& op = emit("pow", {x});
  op.outs = {y};
  finish_outs(op);
  op.saved.push_back(x);
  if (op.has_backward) {
    add_grads(op, {x});
    op.bwd_pre_temp_bytes = {info(x).bytes, info(x).bytes};
  }
  return y;
}

TensorId GraphBuilder::cumsum(TensorId x, size_t dim) {
  TensorId y = new_tensor(shape(x), dtype(x), TensorKind::activation);
  Op& op = emit("cumsum", {x});
  op.outs = {y};
  finish_outs(op);
  if (op.has_backward) {
    add_grads(op, {x});
    if (shape(x).at(dim) > 1 && info(x).bytes > dtype_bytes(dtype(x)))
      op.bwd_pre_temp_bytes = {info(x).bytes, info(x).bytes};  // flip(dim), then its cumsum
  }
  return y;
}

TensorId GraphBuilder::unary(std::string_view name, TensorId x, bool save_in, bool save_out, bool fp32_policy) {
  if (fp32_policy) x = autocast_fp32(x);
  TensorId y = new_tensor(shape(x), dtype(x), TensorKind::activation);
  Op& op = emit(name, {x});
  op.outs = {y};
  finish_outs(op);
  if (save_in) op.saved.push_back(x);
  if (save_out) op.saved.push_back(y);
  if (op.has_backward) add_grads(op, {x});
  return y;
}

TensorId GraphBuilder::reduce_last(std::string_view name, TensorId x, bool save_in) {
  Shape s = shape(x);
  s.back() = 1;
  TensorId y = new_tensor(s, dtype(x), TensorKind::activation);
  Op& op = emit(name, {x});
  op.outs = {y};
  finish_outs(op);
  if (save_in) op.saved.push_back(x);
  if (op.has_backward) add_grads(op, {x});
  return y;
}

TensorId GraphBuilder::cat(std::string_view name, std::initializer_list<TensorId> parts, int dim,
                           std::optional<DType> also_dtype, bool cast_part_grads) {
  Shape s = shape(*parts.begin());
  const size_t d = dim < 0 ? s.size() - static_cast<size_t>(-dim) : static_cast<size_t>(dim);
  s[d] = 0;
  DType dt = also_dtype ? promote(*also_dtype, dtype(*parts.begin())) : dtype(*parts.begin());
  for (TensorId p : parts) {
    s[d] = checked_add(s[d], shape(p)[d], "cat size");
    dt = promote(dt, dtype(p));
  }
  TensorId y = new_tensor(s, dt, TensorKind::activation);
  Op& op = emit(name, std::vector<TensorId>(parts));
  op.outs = {y};
  finish_outs(op);
  if (op.has_backward)  // CatBackward hands each input a narrow() view of the gradient
    for (TensorId p : parts)
      if (info(p).requires_grad) {
        GradSpec g{p, 0, 0};
        g.narrow_of_out = true;
        if (cast_part_grads && dtype(p) != dt) g.cast_to_bytes = bytes_of(shape(p), dtype(p));  // p may be a view
        op.grads.push_back(g);
      }
  return y;
}

TensorId GraphBuilder::cat_list(std::string_view name, const std::vector<TensorId>& parts, int dim) {
  if (parts.empty()) throw InputError("cat", "0", "needs at least one tensor");
  Shape s = shape(parts.front());
  const size_t d = dim < 0 ? s.size() - static_cast<size_t>(-dim) : static_cast<size_t>(dim);
  s[d] = 0;
  DType dt = dtype(parts.front());
  for (TensorId p : parts) {
    s[d] = checked_add(s[d], shape(p)[d], "cat size");
    dt = promote(dt, dtype(p));
  }
  TensorId y = new_tensor(s, dt, TensorKind::activation);
  Op& op = emit(name, parts);
  op.outs = {y};
  finish_outs(op);
  if (op.has_backward)  // CatBackward: narrow() views of the gradient, as cat()
    for (TensorId p : parts)
      if (info(p).requires_grad) {
        GradSpec g{p, 0, 0};
        g.narrow_of_out = true;
        op.grads.push_back(g);
      }
  return y;
}

TensorId GraphBuilder::contiguous_copy(TensorId x, Shape s, bool grad_copied, bool grad_as_view) {
  TensorId y = new_tensor(std::move(s), dtype(x), TensorKind::activation);
  Op& op = emit("contiguous", {x});
  op.outs = {y};
  finish_outs(op);
  if (op.has_backward) {
    if (grad_copied) op.grads.push_back({x, -1, bytes_of(shape(x), dtype(x))});
    else op.grads.push_back({x, 0, 0});
    op.grads.back().arrives_as_view = grad_as_view && !grad_copied;
  }
  return y;
}

std::vector<TensorId> GraphBuilder::generic(const GenericOp& spec) {
  std::vector<TensorId> outs;
  for (const auto& [s, dt] : spec.outs) outs.push_back(new_tensor(s, dt, TensorKind::activation));
  Op& op = emit(spec.name, spec.reads);
  op.outs = outs;
  op.fwd_temp_bytes = spec.fwd_temp_bytes;
  finish_outs(op);
  const std::vector<int>& sr = spec.saved_reads;
  if (is_product(spec.name) && sr.size() == 2 && sr[0] == 0 && sr[1] == 1) {
    // A product's two operands, as save_for_product: each formula of derivatives.yaml (mm, bmm, _grouped_mm, and
    // matmul's decomposition into them) reads the other operand, and autograd's generated code saves an operand
    // only for a gradient it will compute. A frozen expert weight (LoRA on a mixture-of-experts model's
    // attention) keeps its product's input unsaved: family set 28, gpt-oss and DeepSeek-V3 with adapters on the
    // attention, +45 / +35 MiB a layer over the measured peak before this.
    save_for_product(op, spec.reads[0], spec.reads[1]);
  } else {
    for (int i : spec.saved_reads) op.saved.push_back(spec.reads[static_cast<size_t>(i)]);
  }
  for (int i : spec.saved_outs) op.saved.push_back(outs[static_cast<size_t>(i)]);
  if (op.has_backward) {
    add_grads(op, spec.reads);
    op.bwd_temp_bytes = spec.bwd_temp_bytes;
    op.bwd_pre_temp_bytes = spec.bwd_pre_temp_bytes;
    for (const auto& [read, bytes] : spec.grad_bytes)
      for (GradSpec& gs : op.grads)
        if (gs.input == spec.reads[static_cast<size_t>(read)] && gs.alias_out < 0) gs.bytes = bytes;
  }
  return outs;
}

// ---------------------------------------------------------------- finishing

void GraphBuilder::set_loss(TensorId loss) { g_.loss = loss; }
void GraphBuilder::mark_model_end() { g_.model_end_op = static_cast<int32_t>(g_.ops.size()); }
void GraphBuilder::exit_autocast() {
  if (autocast_) g_.autocast_exit_op = static_cast<int32_t>(g_.ops.size()) - 1;
}

Graph GraphBuilder::finish() {
  const size_t n = g_.tensors.size();
  std::vector<int32_t> created(n, -1), last_read(n, -1);
  for (size_t i = 0; i < g_.ops.size(); ++i) {
    const auto oi = static_cast<int32_t>(i);
    for (TensorId o : g_.ops[i].outs) created[static_cast<size_t>(o)] = oi;
    for (TensorId r : g_.ops[i].reads) last_read[static_cast<size_t>(r)] = oi;
  }
  const auto last_op = static_cast<int32_t>(g_.ops.size()) - 1;
  g_.py_release_op.assign(n, -1);
  for (size_t t = 0; t < n; ++t) {
    const auto& ti = g_.tensors[t];
    if (ti.kind == TensorKind::param || ti.kind == TensorKind::buffer) { g_.py_release_op[t] = INT32_MAX; continue; }
    if (ti.kind == TensorKind::input) { g_.py_release_op[t] = last_op; continue; }  // the batch lives all step
    // cache tensors: the cache's reference goes when the update rebinds the slot (after the last read)
    int32_t rel = std::max(created[t], last_read[t]);
    if (explicit_release_[t] == kHeld) rel = last_op;
    else if (explicit_release_[t] >= 0) rel = std::max(rel, explicit_release_[t]);
    g_.py_release_op[t] = rel;
  }
  for (TensorId t : g_.cache_out) g_.py_release_op[static_cast<size_t>(g_.tensors[static_cast<size_t>(t)].storage)] = INT32_MAX;
  lora::check_matched(cfg_.lora, lora_);
  if (g_.model_end_op == 0) g_.model_end_op = static_cast<int32_t>(g_.ops.size());
  return std::move(g_);
}

}  // namespace memplan
