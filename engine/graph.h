// The model IR: tensors and ops of one forward pass in execution order, with the autograd facts that decide
// memory (what each op saves for backward, what its backward allocates, which tensors alias one storage).
//
// Contract:
//  - Ids are dense indices: TensorId into Graph::tensors, op index into Graph::ops.
//  - A view (`storage != id`) owns no bytes; its storage is kept alive while any view of it is referenced.
//  - Op::saved lists tensors retained until that op's backward runs (derivatives.yaml's saved variables).
//  - Op::grads lists, in allocation order, the gradients the op's backward produces for its differentiable
//    inputs: fresh buffers (`alias_out < 0`) or the incoming output gradient passed through (`alias_out >= 0`).
//  - Shapes and dtypes are concrete: a Graph is built for one batch size, sequence length and precision.
//  - Inference graphs carry KV-cache slots (one per layer and per K/V, in update order): `cache_in[j]` is the
//    slot's tensor as the cache holds it when the pass starts (kind `cache`: owned by the cache, no bytes of
//    its own here; the cache drops its reference after the tensor's last read), `cache_out[j]` is what the
//    cache holds when the pass ends (its storage outlives the Graph). Training graphs have no slots.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/dtype.h"
#include "engine/small_vec.h"

namespace memplan {

using TensorId = int32_t;
constexpr TensorId kNoTensor = -1;

enum class TensorKind : uint8_t { param, buffer, input, activation, cache };

struct TensorInfo {
  std::vector<int64_t> shape;
  DType dtype = DType::f32;
  TensorKind kind = TensorKind::activation;
  TensorId storage = kNoTensor;   // == own id for a tensor owning memory; base's storage for a view
  int64_t bytes = 0;              // requested bytes of the storage it owns (0 for a view)
  bool requires_grad = false;
  bool trainable = false;         // params: receives a .grad and optimizer state
  bool autocast_cache = false;    // the autocast cache's low-precision copy of a parameter
  TensorId cast_of = kNoTensor;   // for autocast cache entries: the parameter it copies
  int32_t name = -1;              // index into Graph::names (params and buffers only)
};

struct GradSpec {
  TensorId input = kNoTensor;  // the differentiable input receiving this gradient
  int32_t alias_out = -1;      // >= 0: gradient is output `alias_out`'s gradient passed through (no allocation)
  int64_t bytes = 0;           // bytes of a fresh gradient buffer (alias_out < 0)
  int64_t then_temp_bytes = 0;  // a workspace of the kernel computing this gradient: allocated right after it,
                                // freed before the next gradient (cuDNN dgrad / wgrad)
  // > 0: the gradient is computed in another dtype or shape than its input's (the op's promoted output
  // dtype, a broadcast operand's full size, or a pass-through of such a gradient); the autograd engine's
  // validate_outputs casts / reduces it once the node has returned all its gradients: a fresh buffer of
  // these bytes, then the computed one is released.
  int64_t cast_to_bytes = 0;
  // With cast_to_bytes, for a broadcast operand: validate_outputs sums the full-size gradient back to the
  // operand's shape (sum_to); the reduction kernel stages partial sums in a workspace allocated after the
  // reduced result and freed at once (engine/reduce_workspace.h).
  int64_t reduce_workspace_bytes = 0;
  int64_t reduce_semaphore_bytes = 0;
  // With alias_out: the gradient is a narrow() view of part of the output's gradient (CatBackward), sharing
  // its buffer, which lives until the last such view is released.
  bool narrow_of_out = false;
  // The engine hands this gradient on as a view (a linear over [B, S, H] computes it as a 2-d mm, reshaped
  // back): an InputBuffer holding such a view cannot accumulate into it in place (its storage has a second
  // owner, the view's base), so the first sum into it is a fresh buffer (whole-run stream: q/k/v
  // projections' input gradients).
  bool arrives_as_view = false;
  // The input's position in the autograd node (self = 0, other = 1). Generated nodes compute their gradients
  // in reverse input order (mm, bmm: mat2 first; mul: other first), but validate_outputs casts / reduces them
  // in input order: the grads list carries computation order, this field the validation order.
  int8_t input_slot = 0;
};

struct Op {
  int32_t name = -1;                  // index into Graph::names, e.g. "linear", "sdpa"
  int32_t layer = -1;                 // index into Graph::layers, -1 outside any layer
  // The lists' inline capacities follow what the zoo's graphs hold (training, bf16 / amp / checkpointed):
  // reads <= 4 in 99.7 % of ops, outs <= 2 in 95 %, saved <= 2 in 95 %, grads <= 2 in 92 %, workspaces 0 or 1
  // in 99.8 %; a longer list lives on the heap. An Op is 248 bytes: the op table is one of the largest an
  // estimate writes (3,706 ops for Llama-2-70B), and each of its pages is a page fault on every estimate.
  SmallVec<TensorId, 4> reads;        // tensors the op reads
  SmallVec<TensorId, 2> outs;         // tensors it creates, allocated in this order
  SmallVec<int64_t, 1> fwd_temp_bytes;  // workspaces allocated after outs and freed before the op returns
  SmallVec<TensorId, 2> saved;        // retained for backward
  SmallVec<GradSpec, 2> grads;        // backward's gradient outputs in allocation order (empty: no backward)
  SmallVec<int64_t, 1> bwd_temp_bytes;  // backward workspaces, allocated after grads, freed before it returns
  // Temporaries of a composite backward formula that are alive while the gradient is computed: allocated
  // before the first gradient, freed (last first) after the last (pow: `grad * (e * self.pow(e - 1))`).
  SmallVec<int64_t, 2> bwd_pre_temp_bytes;
  bool has_backward : 1 = false;
  bool optional_workspaces : 1 = false;  // fwd_temp_bytes / then_temp_bytes may be skipped under pressure (cuDNN)
  bool dropout : 1 = false;  // SDPA ops: dropout_p > 0 while training (the kernel draws the mask: step-time model)
  bool causal : 1 = false;   // SDPA ops: is_causal (the kernel skips the masked half of the scores: step-time model)
  // to_copy ops autocast inserts (GraphBuilder::autocast_low / autocast_fp32): issued from C++ inside the autocast
  // wrapper of the op that needs them, not a Python call of their own (step-time model's host side)
  bool autocast_cast : 1 = false;
  int32_t conv = -1;                 // conv ops: index into Graph::convs (the arguments shapes do not carry)
};
static_assert(sizeof(Op) <= 248, "Op's size is a page-fault budget (see the lists' capacities)");

// A convolution's arguments (stride, padding, dilation, groups, memory format): the step-time model looks its
// kernels up by them (engine/time/kernel_tables.h). Square kernels, as GraphBuilder::conv2d_ex builds them.
struct ConvAttrs {
  int64_t stride = 1, pad = 0, dilation = 1, groups = 1;
  bool channels_last = false;
};

struct LayerInfo {
  int32_t name = -1;
  int32_t first_op = 0;   // half-open [first_op, end_op)
  int32_t end_op = 0;
  bool checkpointed = false;  // non-reentrant activation checkpointing of the whole layer
};

struct Graph {
  std::vector<TensorInfo> tensors;
  std::vector<Op> ops;
  std::vector<LayerInfo> layers;
  std::vector<std::string> names;
  // Python reference lifetime: a tensor's own reference is dropped after op `py_release_op[t]`
  // (-1: right after creation). Params, buffers are never dropped.
  std::vector<int32_t> py_release_op;
  TensorId loss = kNoTensor;
  int32_t autocast_exit_op = -1;  // cache entries lose the cache's reference after this op (-1: never cached)
  int32_t model_end_op = 0;       // ops [0, model_end_op) are the model's forward; the rest is the loss
  // Tensors model construction allocates and drops once every parameter exists (allocated and freed in this
  // order right after the parameters): a tied head's own nn.Linear weight, replaced by tie_weights().
  std::vector<int64_t> build_temp_bytes;
  // Allocations model construction makes before the first parameter and keeps for the run (transformers'
  // one-element scalar of the default dtype; see hf_construction_scalar in engine/arch/builders.h).
  std::vector<int64_t> build_persistent_bytes;
  std::vector<TensorId> cache_in;   // inference: per KV slot, the cache entry at pass start (kNoTensor: empty)
  std::vector<TensorId> cache_out;  // inference: per KV slot, the entry at pass end (a view keeps its storage)
  std::vector<ConvAttrs> convs;     // Op::conv indexes these

  const std::string& name_of(int32_t idx) const { return names[static_cast<size_t>(idx)]; }
};

}  // namespace memplan
