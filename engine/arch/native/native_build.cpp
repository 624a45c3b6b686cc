// Native graphs, part 2: stages 2-3 of build_native. Symbolic dims are resolved against the RunConfig, then
// each op is emitted through the GraphBuilder call that gives it the memory behaviour of the real kernel
// (the same calls the built-in architectures make, so a native GPT-2 replays like build_gpt2).
#include <algorithm>
#include <unordered_map>

#include "engine/arch/builders.h"
#include "engine/arch/native/native.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

// Errors this file raises already carry the full path; anything else from GraphBuilder is prefixed with the op.
struct PathError : InputError {
  using InputError::InputError;
};

std::string shape_text(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n = checked_mul(n, d, "numel");
  return n;
}

class Emitter {
 public:
  explicit Emitter(GraphBuilder& b) : b_(b), cfg_(b.config()) {}

  void leaves(const NativeGraph& g) {
    for (size_t i = 0; i < g.params.size(); ++i) {
      const NativeParam& p = g.params[i];
      const DType dt = p.dtype.value_or(b_.param_dtype());
      const std::string path = "params[" + std::to_string(i) + "].shape";
      tensors_[p.name] = b_.param(p.name, shape(p.shape, dt, path), p.trainable, p.dtype);
    }
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const NativeInput& in = g.inputs[i];
      const DType dt = in.dtype.value_or(b_.param_dtype());
      tensors_[in.name] = b_.input(shape(in.shape, dt, "inputs[" + std::to_string(i) + "].shape"), dt);
    }
    for (size_t i = 0; i < g.build_persistent_bytes.size(); ++i)
      b_.construction_persistent(dim(g.build_persistent_bytes[i], "build_persistent_bytes[" + std::to_string(i) + "]"));
    for (size_t i = 0; i < g.build_temp_bytes.size(); ++i)
      b_.construction_temp(dim(g.build_temp_bytes[i], "build_temp_bytes[" + std::to_string(i) + "]"));
  }

  void op(const NativeOp& op, const std::string& path) {
    std::vector<TensorId> outs;
    try {
      outs = emit(op, path);
    } catch (const PathError&) {
      throw;
    } catch (const InputError& e) {
      throw InputError::prefixed(path + ".", e);
    }
    for (size_t i = 0; i < op.out.size(); ++i) tensors_[op.out[i]] = outs[i];
    for (const auto& r : op.release) b_.drop(tensors_.at(r));
  }

  TensorId tensor(const std::string& name) const { return tensors_.at(name); }

 private:
  int64_t dim(const Dim& d, const std::string& field) const {
    int64_t total = 0;
    for (const DimTerm& t : d.terms) {
      if (t.batch_pow > 0 && cfg_.batch_size <= 0)
        throw PathError("batch_size", std::to_string(cfg_.batch_size), field + " uses batch; it must be positive");
      if (t.seq_pow > 0 && cfg_.seq_len <= 0)
        throw PathError("seq_len", std::to_string(cfg_.seq_len), field + " uses seq; pass a positive --seq-len");
      int64_t v = t.coeff;
      for (int32_t k = 0; k < t.batch_pow; ++k) v = checked_mul(v, cfg_.batch_size, field.c_str());
      for (int32_t k = 0; k < t.seq_pow; ++k) v = checked_mul(v, cfg_.seq_len, field.c_str());
      total = checked_add(total, v, field.c_str());
    }
    return total;
  }

  // Resolves a shape; its bytes in `dt` must fit in 64 bits.
  Shape shape(const SymShape& s, DType dt, const std::string& field) const {
    Shape out;
    int64_t bytes = dtype_bytes(dt);
    for (size_t i = 0; i < s.size(); ++i) {
      out.push_back(dim(s[i], field + "[" + std::to_string(i) + "]"));
      bytes = checked_mul(bytes, out.back(), field.c_str());
    }
    return out;
  }

  std::vector<TensorId> emit(const NativeOp& op, const std::string& path) {
    std::vector<TensorId> in;
    for (const auto& n : op.in) in.push_back(tensors_.at(n));
    auto arg = [&in](size_t i) { return i < in.size() ? in[i] : kNoTensor; };
    auto sh = [this](TensorId t) -> const Shape& { return b_.shape(t); };
    auto fail = [&path](size_t input, const std::string& value, const std::string& why) {
      throw PathError(path + ".in[" + std::to_string(input) + "]", value, why);
    };
    auto rank = [&](size_t i, size_t r, const char* what) {
      if (sh(in[i]).size() != r) fail(i, shape_text(sh(in[i])), std::string(what) + " must be " + std::to_string(r) + "-d");
    };
    auto vec_of = [&](size_t i, int64_t n, const char* what) {  // optional 1-d [n] operand (bias, norm weight)
      if (arg(i) != kNoTensor && sh(in[i]) != Shape{n})
        fail(i, shape_text(sh(in[i])), std::string(what) + " must be [" + std::to_string(n) + "]");
    };
    auto integer = [&](size_t i, const char* what) {
      if (is_floating(b_.dtype(in[i]))) fail(i, std::string(dtype_name(b_.dtype(in[i]))), std::string(what) + " must be an integer tensor");
    };
    const TensorId x = arg(0);
    switch (op.kind) {
      case NativeOpKind::linear: {
        rank(1, 2, "a linear weight");
        const Shape& w = sh(in[1]);
        const int64_t in_f = op.transposed ? w[0] : w[1], out_f = op.transposed ? w[1] : w[0];
        if (sh(x).empty() || sh(x).back() != in_f)
          fail(0, shape_text(sh(x)), "last dim must equal the weight's in-features " + std::to_string(in_f));
        vec_of(2, out_f, "the bias");
        return {b_.linear(x, in[1], arg(2), op.transposed)};
      }
      case NativeOpKind::matmul: return {b_.matmul(x, in[1], shape(op.shape, DType::f32, path + ".shape"))};
      case NativeOpKind::add: return {b_.add(x, in[1])};
      case NativeOpKind::mul: return {b_.mul(x, in[1])};
      case NativeOpKind::scale: return {b_.scalar_op("mul_scalar", x, false)};
      // derivatives.yaml: gelu/silu backward need the input, relu (threshold_backward) and tanh the result.
      case NativeOpKind::gelu: return {b_.unary("gelu", x, true, false)};
      case NativeOpKind::silu: return {b_.unary("silu", x, true, false)};
      case NativeOpKind::relu: return {b_.unary("relu", x, false, true)};
      case NativeOpKind::tanh: return {b_.unary("tanh", x, false, true)};
      case NativeOpKind::softmax: {
        const auto r = static_cast<int64_t>(sh(x).size());
        if (op.dim && (*op.dim < -r || *op.dim >= r))
          throw PathError(path + ".dim", std::to_string(*op.dim), "out of range for a " + std::to_string(r) + "-d input");
        return {b_.softmax_last(x)};  // memory does not depend on the dim
      }
      case NativeOpKind::layer_norm:
        if (sh(x).empty()) fail(0, "[]", "layer_norm needs at least 1-d input");
        vec_of(1, sh(x).back(), "the norm weight");
        vec_of(2, sh(x).back(), "the norm bias");
        return {b_.layer_norm(x, arg(1), arg(2))};
      case NativeOpKind::rms_norm:
        if (sh(x).empty()) fail(0, "[]", "rms_norm needs at least 1-d input");
        vec_of(1, sh(x).back(), "the norm weight");
        return {rms_norm(b_, x, in[1])};
      case NativeOpKind::dropout: return {b_.dropout(x, op.p)};
      case NativeOpKind::embedding:
        integer(0, "embedding indices");
        rank(1, 2, "an embedding weight");
        return {b_.embedding(x, in[1])};
      case NativeOpKind::sdpa: {
        for (size_t i = 0; i < 3; ++i) rank(i, 4, "sdpa q/k/v ([batch, heads, len, head_dim])");
        const Shape &q = sh(in[0]), &k = sh(in[1]), &v = sh(in[2]);
        if (k[0] != q[0] || k[3] != q[3] || k[1] <= 0 || q[1] % k[1] != 0)
          fail(1, shape_text(k), "k must match q's batch and head_dim, with heads dividing q's " + shape_text(q));
        if (v[0] != k[0] || v[1] != k[1] || v[2] != k[2]) fail(2, shape_text(v), "v must match k's batch, heads and length " + shape_text(k));
        return {b_.sdpa(in[0], in[1], in[2], op.p, op.causal)};
      }
      case NativeOpKind::view: {
        Shape s = shape(op.shape, b_.dtype(x), path + ".shape");
        if (numel_of(s) > numel_of(sh(x)))
          throw PathError(path + ".shape", shape_text(s), "a view cannot hold more elements than its input " + shape_text(sh(x)));
        return {b_.view(x, std::move(s))};
      }
      case NativeOpKind::to: return {b_.to(x, *op.dtype)};
      case NativeOpKind::cross_entropy:
        rank(0, 2, "logits");
        rank(1, 1, "labels");
        integer(1, "labels");
        if (sh(in[1])[0] != sh(x)[0]) fail(1, shape_text(sh(in[1])), "labels must have one entry per logits row");
        return {b_.cross_entropy(x, in[1])};
      case NativeOpKind::conv2d: {
        rank(0, 4, "conv2d input");
        rank(1, 4, "conv2d weight");
        const Shape& w = sh(in[1]);
        if (w[1] != sh(x)[1]) fail(1, shape_text(w), "weight in-channels must equal the input's channels (groups=1)");
        vec_of(2, w[0], "the bias");
        Shape s = shape(op.shape, b_.dtype(x), path + ".shape");
        if (s.size() != 4 || s[0] != sh(x)[0] || s[1] != w[0])
          throw PathError(path + ".shape", shape_text(s), "must be [batch, out_channels, h, w]");
        // The graph gives the output shape only: the stride and padding that produce it (torchvision's
        // convention, e.g. 224 -> 112 with a 7x7 is stride 2 pad 3), for cuDNN's workspace lookup.
        const int64_t in_h = sh(x)[2], k = w[2];
        const int64_t stride = std::max<int64_t>(1, s[2] > 0 ? in_h / s[2] : 1);
        const int64_t pad = std::max<int64_t>(0, ((s[2] - 1) * stride + k - in_h + 1) / 2);
        return {b_.conv2d(x, in[1], arg(2), stride, pad, std::move(s))};
      }
      case NativeOpKind::batch_norm:
        if (sh(x).size() < 2) fail(0, shape_text(sh(x)), "batch_norm needs [N, C, ...]");
        vec_of(1, sh(x)[1], "the weight");
        vec_of(2, sh(x)[1], "the bias");
        return {b_.batch_norm(x, in[1], in[2])};
      case NativeOpKind::split: {
        Shape each = shape(op.shape, b_.dtype(x), path + ".shape");
        const int64_t parts = static_cast<int64_t>(op.out.size());
        if (checked_mul(numel_of(each), parts) > numel_of(sh(x)))
          throw PathError(path + ".shape", shape_text(each), std::to_string(parts) + " parts of this shape hold more elements than the input " + shape_text(sh(x)));
        return b_.split(x, static_cast<int>(parts), each);
      }
      case NativeOpKind::pow: return {b_.pow_scalar(x)};
      case NativeOpKind::add_scalar: return {b_.add_scalar(x)};
      case NativeOpKind::custom: return custom(op, in, path);
    }
    return {};
  }

  std::vector<TensorId> custom(const NativeOp& op, const std::vector<TensorId>& in, const std::string& path) {
    GraphBuilder::GenericOp g;
    g.name = op.name.empty() ? std::string_view("custom") : std::string_view(op.name);
    g.reads = in;
    const DType fallback = in.empty() ? b_.param_dtype() : b_.dtype(in[0]);
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      const DType dt = op.outputs[i].dtype.value_or(fallback);
      g.outs.emplace_back(shape(op.outputs[i].shape, dt, path + ".outputs[" + std::to_string(i) + "].shape"), dt);
    }
    for (const auto& s : op.saved) {
      bool found = false;
      for (size_t i = 0; i < op.in.size() && !found; ++i)
        if (op.in[i] == s) { g.saved_reads.push_back(static_cast<int>(i)); found = true; }
      for (size_t i = 0; i < op.out.size() && !found; ++i)
        if (op.out[i] == s) { g.saved_outs.push_back(static_cast<int>(i)); found = true; }
    }
    for (size_t i = 0; i < op.fwd_workspace_bytes.size(); ++i)
      g.fwd_temp_bytes.push_back(dim(op.fwd_workspace_bytes[i], path + ".fwd_workspace_bytes[" + std::to_string(i) + "]"));
    for (size_t i = 0; i < op.bwd_workspace_bytes.size(); ++i)
      g.bwd_temp_bytes.push_back(dim(op.bwd_workspace_bytes[i], path + ".bwd_workspace_bytes[" + std::to_string(i) + "]"));
    return b_.generic(g);
  }

  GraphBuilder& b_;
  const RunConfig& cfg_;
  std::unordered_map<std::string, TensorId> tensors_;
};

}  // namespace

void build_native(GraphBuilder& b, const NativeGraph& g) {
  validate_native(g);
  const RunConfig& cfg = b.config();
  // Layer freezing is per parameter in a native graph; a flag that silently did nothing would mislead.
  if (!cfg.frozen_layers.empty())
    throw InputError("frozen_layers", std::to_string(cfg.frozen_layers.size()) + " layers",
                     "not supported for native graphs; set \"trainable\": false on their params");
  if (cfg.freeze_embeddings)
    throw InputError("freeze_embeddings", "true", "not supported for native graphs; set \"trainable\": false on their params");

  Emitter e(b);
  e.leaves(g);
  int64_t named = 0;  // --grad-checkpointing indices count named layers only
  for (size_t l = 0; l < g.layers.size(); ++l) {
    const NativeLayer& layer = g.layers[l];
    if (!layer.name.empty()) b.begin_layer(layer.name, layer.checkpoint || layer_checkpointed(cfg, named++));
    for (size_t o = 0; o < layer.ops.size(); ++o)
      e.op(layer.ops[o], "layers[" + std::to_string(l) + "].ops[" + std::to_string(o) + "]");
    if (!layer.name.empty()) b.end_layer();
  }
  const TensorId loss = e.tensor(g.loss);
  if (b.numel(loss) != 1) throw InputError("loss", shape_text(b.shape(loss)), "must be a scalar");
  if (b.training() && !b.info(loss).requires_grad)
    throw InputError("loss", "\"" + g.loss + "\"", "does not require grad: no trainable parameter reaches it");
  b.exit_autocast();
  b.set_loss(loss);
}

}  // namespace memplan
