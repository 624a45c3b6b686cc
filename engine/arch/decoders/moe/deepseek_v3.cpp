// DeepseekV3ForCausalLM (transformers 5.17 models/deepseek_v3/modeling_deepseek_v3.py): the shared multi-head
// latent attention decoder of engine/arch/decoders/parts/deepseek_parts.cpp with DeepseekV3RotaryEmbedding's cos / sin
// (LlamaRotaryEmbedding's locals over qk_rope_head_dim), apply_rotary_pos_emb_interleave (rope_interleave) or
// apply_rotary_pos_emb, and DeepseekV3TopkRouter (sigmoid scores, e_score_correction_bias, group top-2 sums,
// group mask, gathered weights, norm_topk_prob, routed_scaling_factor).
#include "engine/arch/decoders/parts/deepseek_parts.h"

namespace memplan {

void build_deepseek_v3(GraphBuilder& b, const TransformerSpec& s) { build_deepseek(b, s); }

}  // namespace memplan
