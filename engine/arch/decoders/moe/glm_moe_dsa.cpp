// GlmMoeDsaForCausalLM (transformers 5.17 models/glm_moe_dsa/modeling_glm_moe_dsa.py; GLM-5): DeepSeek-V3.2's
// decoder (MLA, the DSA lightning indexer under no_grad, the noaux_tc MoE with shared experts) with two changes,
// both in the attention (engine/arch/decoders/parts/dsa_parts.h):
//   - GlmMoeDsaIndexer rotates with apply_rotary_pos_emb_interleave (cat(x1 cos - x2 sin, x2 cos + x1 sin) over the
//     even / odd slices and half-width cos / sin views) where DeepSeek-V3.2's indexer uses rotate_half;
//   - cross-layer top-k sharing: config.indexer_types[i] == "shared" builds no indexer (no wq_b / wk / k_norm /
//     weights_proj, no indexer keys in the cache) and reuses the previous layer's topk_indices. Every attention
//     returns its topk_indices through the decoder layer to the model's loop (`hidden_states, topk_indices =
//     decoder_layer(..., prev_topk_indices=topk_indices)`), so a full layer's [B, S, k] int32 top-k lives until
//     the next full layer has returned (and after the last layer until the model's forward returns), where
//     DeepSeek-V3.2's dies inside its attention. Under checkpointing every layer's frame keeps the top-k it was
//     passed until its backward.
//
// Stages: embed_tokens -> position_ids -> create_causal_mask(allow_is_causal_skip=False: always materialised, SDPA
// too: a bool [P, 1, S, T]; eager: the float [B, 1, S, T]) -> rotary cos / sin [P, S, rope] -> N x decoder layer
// (DeepseekV3RMSNorm, the DSA attention, residual, norm, the dense MLP or the MoE by first_k_dense_replace,
// residual) -> norm -> lm_head -> loss (training) or the last logits (inference). The MTP layer
// (num_nextn_predict_layers) is not built by from_config.
#include <string>
#include <vector>

#include "engine/arch/decoders/parts/dsa_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_glm_moe_dsa(GraphBuilder& b, const TransformerSpec& s) {
  if (s.kv_lora_rank <= 0 || s.qk_rope_head_dim <= 0 || s.q_lora_rank <= 0)
    throw InputError("model.q_lora_rank", std::to_string(s.q_lora_rank),
                     "DeepSeek sparse attention needs q_lora_rank, kv_lora_rank and qk_rope_head_dim > 0");
  if (!s.index_shared_layers.empty() && static_cast<int64_t>(s.index_shared_layers.size()) != s.num_layers)
    throw InputError("model.index_shared_layers", std::to_string(s.index_shared_layers.size()) + " entries",
                     "must list every layer (" + std::to_string(s.num_layers) + ")");
  if (!s.index_shared_layers.empty() && s.index_shared_layers[0] != 0)
    throw InputError("config.indexer_types", "[\"shared\", ...]",
                     "layer 0 has no previous full layer whose top-k it could reuse");
  if (s.num_kv_heads != s.num_heads)
    throw InputError("config.num_key_value_heads", std::to_string(s.num_kv_heads),
                     "must equal num_attention_heads (" + std::to_string(s.num_heads) + ") for multi-head latent attention");
  build_dsa_model(b, s, rope_interleave, /*layers_return_topk=*/true);
}

}  // namespace memplan
