// Pieces of T5ForConditionalGeneration (engine/arch/seq2seq/t5.cpp) that UMT5 (engine/arch/seq2seq/umt5.cpp) runs
// as the same Python in transformers 5.17 (umt5's modules are "Copied from" t5's): T5LayerNorm, the dense
// activations and T5LayerFF, T5Block's fp16 clamp, compute_bias with _relative_position_bucket, the biased SDPA
// of integrations/sdpa_attention.py as the H200 runs it, the parameters of one attention and one FF sub-layer in
// registration order, and DynamicLayer.update's cat. Their contracts are stated at their definitions in t5.cpp.
#pragma once
#include <string>

#include "engine/arch/builders.h"

namespace memplan::t5parts {

bool low_precision(DType t);
// T5LayerNorm over x with weight w.
TensorId t5_norm(GraphBuilder& b, TensorId x, TensorId w);
// The dense activation (relu, gelu_new, gelu, gelu_pytorch_tanh, silu / swish).
TensorId t5_act(GraphBuilder& b, const std::string& act, TensorId x);
// T5Block's clamp after a sub-layer when h is fp16 (h itself otherwise).
TensorId fp16_clamp(GraphBuilder& b, TensorId h);
// compute_bias(q, k): the [1, heads, q, k] permuted view of the relative_attention_bias lookup.
TensorId compute_bias(GraphBuilder& b, TensorId table, int64_t q, int64_t k, int64_t heads, bool bidirectional);
TensorId matmul_no_autocast(GraphBuilder& b, TensorId x, TensorId y, Shape out, bool copy_x, bool copy_y);
// sdpa_attention_forward with `bias` as the float mask; `bias_permuted`: the relative bias (math backend) rather
// than a contiguous zero bias. Sets out_contiguous_heads when the output's memory is [B, H, q, D].
TensorId biased_sdpa(GraphBuilder& b, TensorId q, TensorId k, TensorId v, TensorId bias, bool bias_permuted,
                     double dropout_p, bool& out_contiguous_heads);

struct AttnParams {
  TensorId q, k, v, o;
};
// q, k, v, o of one attention module; `p` ends with the module's name and a dot.
AttnParams attn_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train);

struct FfParams {
  TensorId wi = kNoTensor, wi1 = kNoTensor, wo = kNoTensor, norm = kNoTensor;
};
// DenseReluDense's weights and the sub-layer's layer_norm; `p` ends with "layer.<i>.".
FfParams ff_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train);
// T5LayerFF: h + dropout(DenseReluDense(layer_norm(h))).
TensorId feed_forward(GraphBuilder& b, const TransformerSpec& s, const FfParams& w, TensorId h);

// The KV cache's dtype (the k / v projections' outputs).
DType cache_dtype(const GraphBuilder& b);
// DynamicLayer.update: cat([cached (past positions), x], dim=-2), marked as the layer's cache.
TensorId cache_cat(GraphBuilder& b, TensorId x, int64_t past);

}  // namespace memplan::t5parts
