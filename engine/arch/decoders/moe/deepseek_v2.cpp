// DeepseekV2ForCausalLM (transformers 5.17 models/deepseek_v2/modeling_deepseek_v2.py): the shared
// multi-head latent attention decoder of engine/arch/decoders/parts/deepseek_parts.cpp with DeepseekV2RotaryEmbedding's complex
// freqs_cis, apply_rotary_emb (complex product) and DeepseekV2TopkRouter (fp32 softmax, greedy or
// group_limited_greedy top-k, times routed_scaling_factor).
#include "engine/arch/decoders/parts/deepseek_parts.h"

namespace memplan {

void build_deepseek_v2(GraphBuilder& b, const TransformerSpec& s) { build_deepseek(b, s); }

}  // namespace memplan
