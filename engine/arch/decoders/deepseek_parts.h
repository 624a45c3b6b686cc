// Pieces shared by the deepseek_v2, deepseek_v3 and gpt_oss builders (engine/arch/decoders/deepseek_v2.cpp, _v3.cpp,
// gpt_oss.cpp): the routed experts through transformers 5.17's default experts implementation, and the
// multi-head latent attention decoder both DeepSeek modeling files write the same way.
#pragma once
#include "engine/arch/builders.h"

namespace memplan {

// The routed experts' parameters and layout.
struct ExpertsParams {
  int64_t experts = 0, top_k = 0, inter = 0;
  TensorId gate_up = kNoTensor, down = kNoTensor;             // [E, 2I, H] / [E, H, I] (gpt_oss: transposed)
  TensorId gate_up_bias = kNoTensor, down_bias = kNoTensor;   // gpt_oss: [E, 2I] / [E, H]
  bool gpt_oss_gate = false;  // GptOssExperts._apply_gate: interleaved gate / up, clamps, sigmoid(alpha x) glu
};

// integrations/moe.py grouped_mm_experts_forward (the default experts_implementation "grouped_mm" that
// @use_experts_implementation installs on DeepseekV2Experts, DeepseekV3Experts and GptOssExperts; generate()'s
// decode steps run batched_mm_experts_forward instead, see deepseek_parts.cpp): sort by
// expert, gather the R = T * k routed rows, masked_fill_ the sentinel rows, grouped_mm (input cast to the
// weight's dtype: grouped_mm is not autocast), per-row bias gathered from the expert bias (has_bias) and
// add_-ed in place, masked_fill, the gate, grouped_mm down (+ bias), masked_fill, times the routing weight,
// back to token order, view(T, k, H).sum(1), cast to the input dtype. Returns [T, H].
// llama_parts.h moe_grouped_mm is the same function bound to Mixtral's router and config.intermediate_size; the
// routers here differ (fp32 / sigmoid / biased), so the experts part is written once for them.
TensorId experts_grouped_mm(GraphBuilder& b, const ExpertsParams& e, TensorId flat, TensorId top_w, TensorId top_idx);

// DeepseekV2ForCausalLM / DeepseekV3ForCausalLM (training forward + loss, or one inference pass).
void build_deepseek(GraphBuilder& b, const TransformerSpec& s);

}  // namespace memplan
