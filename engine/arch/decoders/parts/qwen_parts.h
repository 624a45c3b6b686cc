// What Qwen3ForCausalLM (engine/arch/decoders/dense/qwen3.cpp) and Qwen3MoeForCausalLM (engine/arch/decoders/moe/qwen3_moe.cpp) share:
// transformers 5.17 generates modeling_qwen3_moe.py from modeling_qwen3.py, so the two run the same embedding,
// masks, rotary embedding, attention (per-head q/k RMSNorm before the rotary embedding) and decoder layer; only
// the feed-forward block differs.
#pragma once
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"

namespace memplan {

// The whole Qwen3 / Qwen3Moe causal LM: training forward + loss, or one inference pass (b.pass()). A layer with
// s.moe_layers[i] != 0 runs qwen3_moe_block, any other a SwiGLU MLP of intermediate_size.
void build_qwen3_model(GraphBuilder& b, const TransformerSpec& s);

// Qwen3MoeSparseMoeBlock (qwen3_moe.cpp): Qwen3MoeTopKRouter, then the experts through transformers 5.17's
// default grouped_mm implementation. `w`: gate = router [E, H], up = experts.gate_up_proj [E, 2I, H],
// down = experts.down_proj [E, H, I] (I = moe_intermediate_size).
TensorId qwen3_moe_block(GraphBuilder& b, const TransformerSpec& s, const FfnParams& w, TensorId x);

// The two halves of that block, which Qwen2MoeSparseMoeBlock (qwen2_moe.cpp) runs with a shared expert around
// them. qwen_moe_router: the TopK router over flat [T, H] (router [E, H]); what it returns (router_logits,
// routing_weights, selected_experts) is held, bound in the block's forward until release_route.
// qwen_moe_experts: the experts over the routed rows (grouped_mm; batched_mm in generate()'s decode steps),
// [T, H] in flat's dtype.
struct QwenMoeRoute {
  TensorId logits, weights, selected;
};
QwenMoeRoute qwen_moe_router(GraphBuilder& b, const TransformerSpec& s, TensorId router, TensorId flat);
TensorId qwen_moe_experts(GraphBuilder& b, const TransformerSpec& s, TensorId gate_up, TensorId down, TensorId flat,
                          const QwenMoeRoute& route);
void release_route(GraphBuilder& b, const QwenMoeRoute& r);

}  // namespace memplan
