// The statements GraniteForCausalLM (granite.cpp) and GraniteMoe / GraniteMoeShared (granitemoe.cpp) share: the
// four Python-float multipliers of the granite models (models/granite, models/granitemoe, models/granitemoeshared).
#pragma once
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/qwen_parts.h"

namespace memplan {

// `residual + x * residual_multiplier` (the decoder layers, after the attention and after the MLP / MoE block): x
// stays bound (to hidden_states) until the sum exists; the product is a temporary of the statement (MulBackward0
// by a Python float saves nothing and hands back a fresh gradient).
TensorId granite_scaled_residual(GraphBuilder& b, TensorId residual, TensorId x);
// `inputs_embeds * embedding_multiplier` and `logits / logits_scaling`: Python floats, fresh tensors (the
// SkeletonSpec embed_op / logits_op).
TensorId granite_embedding_multiplier(GraphBuilder& b, TensorId x);
TensorId granite_logits_scaling(GraphBuilder& b, TensorId x);
// GraniteMoeTopKRouter.forward (and GraniteMoeHybridTopKRouter's, the same statements) over flat [T, H]: fp32
// logits, topk, softmax of the top logits cast back to the input's dtype. What it returns is held (bound in the
// MoE block until it returns: release_route).
QwenMoeRoute granite_topk_router(GraphBuilder& b, const TransformerSpec& s, TensorId weight, TensorId flat);

}  // namespace memplan
