// The statements GraniteForCausalLM (granite.cpp) and GraniteMoe / GraniteMoeShared (granitemoe.cpp) share: the
// four Python-float multipliers of the granite models (models/granite, models/granitemoe, models/granitemoeshared),
// and the MoE block / shared MLP that granitemoe_swa (granitemoe_swa.cpp) copies.
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
// GraniteMoeMoE.forward (GraniteMoeSWAMoE's the same statements) on x [B, S, H]: flat = x.reshape(-1, H), the
// router's three results bound until the block returns, the experts (qwen_moe_experts: grouped_mm, batched_mm in
// generate()'s decode steps), .view(B, S, H). router [E, H], gate_up [E, 2I, H], down [E, H, I].
TensorId granite_moe_block(GraphBuilder& b, const TransformerSpec& s, TensorId router, TensorId gate_up, TensorId down,
                           TensorId x);
// GraniteMoeSharedMLP.forward (GraniteMoeSWAMLP's the same) on x [B, S, H]: input_linear [2 Is, H] (its two chunk
// views bound until the MLP returns), silu(chunk0) * chunk1, output_linear [H, Is]; Is =
// s.granite_shared_intermediate_size.
TensorId granite_shared_mlp(GraphBuilder& b, const TransformerSpec& s, TensorId input_linear, TensorId output_linear,
                            TensorId x);

}  // namespace memplan
