// Native graphs, part 1: the op table, symbolic dimensions and structural validation (stage 1 of
// build_native). Stages 2-3 (resolve, emit) are in native_build.cpp.
#include "engine/arch/native/native.h"

#include <cctype>
#include <iterator>
#include <unordered_set>

#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

using K = NativeOpKind;
constexpr uint32_t kNone = 0;

// The op set. Arity counts tensor inputs; optional trailing inputs (a bias, norm weights) widen max_in.
constexpr NativeOpInfo kOps[] = {
    {K::linear, "linear", 2, 3, false, kAttrTransposed},
    {K::matmul, "matmul", 2, 2, false, kAttrShape},
    {K::add, "add", 2, 2, false, kNone},
    {K::mul, "mul", 2, 2, false, kNone},
    {K::scale, "scale", 1, 1, false, kNone},
    {K::gelu, "gelu", 1, 1, false, kNone},
    {K::silu, "silu", 1, 1, false, kNone},
    {K::relu, "relu", 1, 1, false, kNone},
    {K::tanh, "tanh", 1, 1, false, kNone},
    {K::softmax, "softmax", 1, 1, false, kAttrDim},
    {K::layer_norm, "layer_norm", 1, 3, false, kNone},
    {K::rms_norm, "rms_norm", 2, 2, false, kNone},
    {K::dropout, "dropout", 1, 1, false, kAttrP},
    {K::embedding, "embedding", 2, 2, false, kNone},
    {K::sdpa, "sdpa", 3, 3, false, kAttrP | kAttrCausal},
    {K::view, "view", 1, 1, false, kAttrShape},
    {K::to, "to", 1, 1, false, kAttrDtype},
    {K::cross_entropy, "cross_entropy", 2, 2, false, kNone},
    {K::conv2d, "conv2d", 2, 3, false, kAttrShape},
    {K::batch_norm, "batch_norm", 3, 3, false, kNone},
    {K::split, "split", 1, 1, true, kAttrShape},
    {K::pow, "pow", 1, 1, false, kNone},
    {K::add_scalar, "add_scalar", 1, 1, false, kNone},
    {K::custom, "custom", 0, 1 << 20, true, kAttrCustom},
};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (static_cast<size_t>(kOps[i].kind) != i) return false;
  return std::size(kOps) == static_cast<size_t>(K::custom) + 1;
}
static_assert(table_in_enum_order(), "kOps is indexed by NativeOpKind");

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string index_path(const std::string& base, const char* key, size_t i) {
  return base + "." + key + "[" + std::to_string(i) + "]";
}

// Parses one positive decimal integer; `field` names it in errors.
int64_t parse_positive(std::string_view digits, std::string_view whole, const std::string& field) {
  int64_t v = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      throw InputError(field, quoted(whole), "a factor must be a positive integer, batch or seq");
    v = checked_add(checked_mul(v, 10, field.c_str()), c - '0', field.c_str());
  }
  if (v <= 0) throw InputError(field, quoted(whole), "dimensions must be positive");
  return v;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

const NativeOpInfo& native_op_info(NativeOpKind kind) { return kOps[static_cast<size_t>(kind)]; }

std::optional<NativeOpKind> parse_native_op_kind(std::string_view name) {
  for (const auto& o : kOps)
    if (o.name == name) return o.kind;
  return std::nullopt;
}

// ---------------------------------------------------------------- dims

Dim::Dim(const char* text) : Dim(parse(text, "dim")) {}

Dim Dim::parse(std::string_view text, const std::string& field) {
  Dim d;
  if (trim(text).empty()) throw InputError(field, quoted(text), "empty dimension");
  std::string_view rest = text;
  while (true) {
    const size_t plus = rest.find('+');
    std::string_view term_text = rest.substr(0, plus);
    DimTerm t;
    std::string_view f_rest = term_text;
    while (true) {
      const size_t star = f_rest.find('*');
      const std::string_view f = trim(f_rest.substr(0, star));
      if (f == "batch") ++t.batch_pow;
      else if (f == "seq") ++t.seq_pow;
      else if (f.empty()) throw InputError(field, quoted(text), "empty factor");
      else t.coeff = checked_mul(t.coeff, parse_positive(f, text, field), field.c_str());
      if (star == std::string_view::npos) break;
      f_rest.remove_prefix(star + 1);
    }
    d.terms.push_back(t);
    if (plus == std::string_view::npos) break;
    rest.remove_prefix(plus + 1);
  }
  return d;
}

std::string Dim::text() const {
  std::string s;
  for (size_t i = 0; i < terms.size(); ++i) {
    const DimTerm& t = terms[i];
    std::string term;
    auto factor = [&term](const std::string& f) { term += (term.empty() ? "" : "*") + f; };
    if (t.coeff != 1 || (t.batch_pow == 0 && t.seq_pow == 0)) factor(std::to_string(t.coeff));
    for (int32_t k = 0; k < t.batch_pow; ++k) factor("batch");
    for (int32_t k = 0; k < t.seq_pow; ++k) factor("seq");
    s += (i ? "+" : "") + term;
  }
  return s;
}

// ---------------------------------------------------------------- validation

namespace {

void check_dim(const Dim& d, const std::string& field) {
  if (d.terms.empty()) throw InputError(field, "an empty dimension", "dimensions must be positive");
  for (const DimTerm& t : d.terms)
    if (t.coeff <= 0 || t.batch_pow < 0 || t.seq_pow < 0)
      throw InputError(field, d.text(), "dimensions must be positive");
}

void check_shape(const SymShape& s, const std::string& field) {
  for (size_t i = 0; i < s.size(); ++i) check_dim(s[i], field + "[" + std::to_string(i) + "]");
}

class Validator {
 public:
  void define(const std::string& name, const std::string& field) {
    if (name.empty()) throw InputError(field, "\"\"", "tensor names must be non-empty");
    if (!defined_.insert(name).second) throw InputError(field, quoted(name), "tensor defined twice");
  }
  void use(const std::string& name, const std::string& field) const {
    if (!defined_.count(name)) throw InputError(field, quoted(name), "undefined tensor");
  }

  void op(const NativeOp& op, const std::string& path) {
    const NativeOpInfo& info = native_op_info(op.kind);
    const auto n_in = static_cast<int64_t>(op.in.size());
    if (n_in < info.min_in || n_in > info.max_in) {
      const std::string want = info.min_in == info.max_in ? std::to_string(info.min_in)
                                                          : std::to_string(info.min_in) + " to " + std::to_string(info.max_in);
      throw InputError(path + ".in", std::to_string(n_in) + " inputs",
                       std::string(info.name) + " takes " + want + (want == "1" ? " input" : " inputs"));
    }
    for (size_t i = 0; i < op.in.size(); ++i) use(op.in[i], index_path(path, "in", i));
    attributes(op, info, path);
    if (!info.multi_out && op.out.size() != 1)
      throw InputError(path + ".out", std::to_string(op.out.size()) + " outputs", std::string(info.name) + " has one output");
    if (info.multi_out && op.out.empty()) throw InputError(path + ".out", "0 outputs", "at least one output is required");
    for (size_t i = 0; i < op.out.size(); ++i) define(op.out[i], info.multi_out ? index_path(path, "out", i) : path + ".out");
    for (size_t i = 0; i < op.saved.size(); ++i) {
      const auto& s = op.saved[i];
      bool own = false;
      for (const auto& n : op.in) own = own || n == s;
      for (const auto& n : op.out) own = own || n == s;
      if (!own) throw InputError(index_path(path, "saved", i), quoted(s), "not an input or output of this op");
    }
    for (size_t i = 0; i < op.release.size(); ++i) use(op.release[i], index_path(path, "release", i));
  }

 private:
  static void attributes(const NativeOp& op, const NativeOpInfo& info, const std::string& path) {
    auto allowed = [&](uint32_t bit, const char* key, bool present) {
      if (present && !(info.attrs & bit))
        throw InputError(path + "." + key, std::string(info.name), "attribute not accepted by this op");
    };
    allowed(kAttrP, "p", op.p != 0.0);
    allowed(kAttrCausal, "causal", op.causal);
    allowed(kAttrTransposed, "transposed", op.transposed);
    allowed(kAttrShape, "shape", !op.shape.empty());
    allowed(kAttrDim, "dim", op.dim.has_value());
    allowed(kAttrDtype, "dtype", op.dtype.has_value());
    allowed(kAttrCustom, "name", !op.name.empty());
    allowed(kAttrCustom, "outputs", !op.outputs.empty());
    allowed(kAttrCustom, "saved", !op.saved.empty());
    allowed(kAttrCustom, "fwd_workspace_bytes", !op.fwd_workspace_bytes.empty());
    allowed(kAttrCustom, "bwd_workspace_bytes", !op.bwd_workspace_bytes.empty());
    if (!(op.p >= 0.0 && op.p < 1.0)) throw InputError(path + ".p", std::to_string(op.p), "must be in [0, 1)");
    if ((info.attrs & kAttrShape) && op.shape.empty())
      throw InputError(path + ".shape", "absent", std::string(info.name) + " needs its output shape");
    if ((info.attrs & kAttrDtype) && !op.dtype) throw InputError(path + ".dtype", "absent", "the target dtype is required");
    check_shape(op.shape, path + ".shape");
    if (op.kind == NativeOpKind::custom && op.outputs.size() != op.out.size())
      throw InputError(path + ".outputs", std::to_string(op.outputs.size()) + " entries",
                       "needs one {shape, dtype} per out name (" + std::to_string(op.out.size()) + ")");
    for (size_t i = 0; i < op.outputs.size(); ++i) check_shape(op.outputs[i].shape, index_path(path, "outputs", i) + ".shape");
    for (size_t i = 0; i < op.fwd_workspace_bytes.size(); ++i)
      check_dim(op.fwd_workspace_bytes[i], index_path(path, "fwd_workspace_bytes", i));
    for (size_t i = 0; i < op.bwd_workspace_bytes.size(); ++i)
      check_dim(op.bwd_workspace_bytes[i], index_path(path, "bwd_workspace_bytes", i));
  }

  std::unordered_set<std::string> defined_;
};

}  // namespace

void validate_native(const NativeGraph& g) {
  Validator v;
  for (size_t i = 0; i < g.params.size(); ++i) {
    const NativeParam& p = g.params[i];
    const std::string path = "params[" + std::to_string(i) + "]";
    v.define(p.name, path + ".name");
    check_shape(p.shape, path + ".shape");
    if (p.trainable && p.dtype && !is_floating(*p.dtype))
      throw InputError(path + ".dtype", std::string(dtype_name(*p.dtype)), "a trainable parameter needs a floating dtype");
  }
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const std::string path = "inputs[" + std::to_string(i) + "]";
    v.define(g.inputs[i].name, path + ".name");
    check_shape(g.inputs[i].shape, path + ".shape");
  }
  check_shape(g.build_temp_bytes, "build_temp_bytes");
  check_shape(g.build_persistent_bytes, "build_persistent_bytes");
  for (size_t l = 0; l < g.layers.size(); ++l) {
    const std::string lpath = "layers[" + std::to_string(l) + "]";
    const NativeLayer& layer = g.layers[l];
    if (layer.ops.empty()) throw InputError(lpath + ".ops", "[]", "a layer needs at least one op");
    if (layer.checkpoint && layer.name.empty())
      throw InputError(lpath + ".checkpoint", "true", "only a named layer can be checkpointed");
    for (size_t o = 0; o < layer.ops.size(); ++o) v.op(layer.ops[o], index_path(lpath, "ops", o));
  }
  if (g.loss.empty()) throw InputError("loss", "\"\"", "name the scalar loss tensor");
  v.use(g.loss, "loss");
}

}  // namespace memplan
