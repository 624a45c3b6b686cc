// Native graphs: a model described op by op by the user (models/NATIVE-FORMAT.md), for architectures we have
// no builder for. This is the logical model — named tensors, symbolic shapes — and its mapping onto
// GraphBuilder; JSON lives in models/native_graph.{h,cpp}.
//
// Stages of build_native:
//   1. validate_native: structure only (op arity, attributes, every name defined once before use, dims
//      positive) — independent of the run configuration, so importers can reject a file early.
//   2. resolve: symbolic dims -> integers from RunConfig (batch_size, seq_len), overflow-checked.
//   3. emit: leaves (params, then inputs, in declaration order), then each op through the GraphBuilder call
//      with the same memory behaviour as the built-in architectures; then the loss.
//
// Contract: every failure is an InputError whose field is a path into the description, e.g.
// `layers[1].ops[3].in[1]: undefined tensor (got "h7")`.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/dtype.h"
#include "engine/run_config.h"

namespace memplan {

class GraphBuilder;

// One product in a symbolic dimension: coeff * batch^batch_pow * seq^seq_pow.
struct DimTerm {
  int64_t coeff = 1;
  int32_t batch_pow = 0;
  int32_t seq_pow = 0;
  bool operator==(const DimTerm&) const = default;
};

// A symbolic dimension: a sum of products of factors, each an integer, `batch` or `seq`.
//   dim    := term ('+' term)*        e.g. 768, "batch*seq", "4*seq", "seq+1"
//   term   := factor ('*' factor)*
//   factor := positive integer | batch | seq
// Terms keep their written order; each term's text is canonical (coefficient first, then batch, then seq).
struct Dim {
  std::vector<DimTerm> terms;

  Dim() = default;
  Dim(int64_t constant) : terms{{constant, 0, 0}} {}  // NOLINT: implicit, shapes read like {"batch", 768}
  Dim(const char* text);                               // NOLINT: parses; InputError("dim", ...) when malformed
  // Parses `text`; errors name `field`.
  static Dim parse(std::string_view text, const std::string& field);
  bool is_constant() const { return terms.size() == 1 && terms[0].batch_pow == 0 && terms[0].seq_pow == 0; }
  std::string text() const;  // canonical text; for a constant, its decimal digits
  bool operator==(const Dim&) const = default;
};

using SymShape = std::vector<Dim>;

// The fixed op set. What each saves and allocates is the GraphBuilder call it maps to (NATIVE-FORMAT.md).
enum class NativeOpKind : uint8_t {
  linear, matmul, add, mul, scale, gelu, silu, relu, tanh, softmax, layer_norm, rms_norm, dropout, embedding,
  sdpa, view, to, cross_entropy, conv2d, batch_norm, split, pow, add_scalar, custom
};

// Attributes an op kind may carry (a bit set over these).
enum NativeAttr : uint32_t {
  kAttrP = 1u << 0,          // p: dropout probability (dropout, sdpa)
  kAttrCausal = 1u << 1,     // causal (sdpa)
  kAttrTransposed = 1u << 2, // transposed: weight stored [in, out] as HF Conv1D (linear)
  kAttrShape = 1u << 3,      // shape: output shape (view, matmul, conv2d, split: each part's; required)
  kAttrDim = 1u << 4,        // dim: softmax dimension (default last)
  kAttrDtype = 1u << 5,      // dtype: target dtype (to; required)
  kAttrCustom = 1u << 6,     // name, outputs, saved, fwd_workspace_bytes, bwd_workspace_bytes (custom)
};

struct NativeOpInfo {
  NativeOpKind kind;
  std::string_view name;  // the JSON spelling
  int min_in, max_in;     // inputs accepted
  bool multi_out;         // out is a list (split, custom); otherwise exactly one output name
  uint32_t attrs;         // NativeAttr bits allowed
};
const NativeOpInfo& native_op_info(NativeOpKind kind);
std::optional<NativeOpKind> parse_native_op_kind(std::string_view name);

// A custom op's output: its shape and dtype (absent: the first input's dtype, else the parameter dtype).
struct NativeOutput {
  SymShape shape;
  std::optional<DType> dtype;
  bool operator==(const NativeOutput&) const = default;
};

struct NativeOp {
  NativeOpKind kind = NativeOpKind::custom;
  std::vector<std::string> in;
  std::vector<std::string> out;
  double p = 0.0;
  bool causal = false;
  bool transposed = false;
  SymShape shape;
  std::optional<int64_t> dim;
  std::optional<DType> dtype;
  // custom
  std::string name;                     // kernel name for reports
  std::vector<NativeOutput> outputs;    // one per out name
  std::vector<std::string> saved;       // names among in/out retained for backward
  std::vector<Dim> fwd_workspace_bytes;
  std::vector<Dim> bwd_workspace_bytes;
  // Python lifetime: these tensors stay referenced until this op has run (default: released after their last
  // use). Extends a lifetime, never shortens it.
  std::vector<std::string> release;
  bool operator==(const NativeOp&) const = default;
};

// A run of ops. A named layer is a checkpointable unit and counts in --grad-checkpointing indices; a layer
// with an empty name is a plain run of ops outside any layer (embeddings, head, loss).
struct NativeLayer {
  std::string name;
  bool checkpoint = false;
  std::vector<NativeOp> ops;
  bool operator==(const NativeLayer&) const = default;
};

struct NativeInput {
  std::string name;
  SymShape shape;
  std::optional<DType> dtype;  // absent: the model's parameter dtype (images, features), as the vision builders
  bool operator==(const NativeInput&) const = default;
};

struct NativeParam {
  std::string name;
  SymShape shape;
  std::optional<DType> dtype;  // absent: the precision's parameter dtype (fp32 under amp)
  bool trainable = true;
  bool operator==(const NativeParam&) const = default;
};

struct NativeGraph {
  std::string name;
  std::vector<NativeInput> inputs;
  std::vector<NativeParam> params;
  std::vector<NativeLayer> layers;
  std::string loss;  // the scalar the backward starts from
  // Bytes model construction allocates and frees once every parameter exists, e.g. a tied head's own
  // nn.Linear weight before tie_weights() replaces it (Graph::build_temp_bytes).
  std::vector<Dim> build_temp_bytes;
  // Bytes model construction allocates before the first parameter and keeps for the run, e.g. transformers'
  // one-element scalar of the default dtype (Graph::build_persistent_bytes).
  std::vector<Dim> build_persistent_bytes;
  // The document's `lora` / `quantization` blocks (peft adapters / bitsandbytes base, engine/lora.h): applied to the
  // graph's linear ops unless the run gives its own (--lora-r, --quantize-base).
  std::optional<LoraConfig> lora;
  std::optional<QuantConfig> quantization;
  bool operator==(const NativeGraph&) const = default;
};

// Stage 1. Throws InputError naming the path of the first problem.
void validate_native(const NativeGraph& g);

// Stages 1-3: appends the whole model and its loss to `b`.
void build_native(GraphBuilder& b, const NativeGraph& g);

}  // namespace memplan
