// DeepseekV32ForCausalLM (transformers 5.17 models/deepseek_v32/modeling_deepseek_v32.py): DeepSeek-V3's multi-head
// latent attention and MoE (engine/arch/decoders/parts/deepseek_parts.h: layer parameters, RMSNorm, interleaved
// rotary, router, experts) with DeepSeek Sparse Attention: a lightning indexer picks index_topk keys per query and
// the attention masks every other key.
//
// Stages: embed_tokens -> position_ids -> create_causal_mask(allow_is_causal_skip=False: always materialised, SDPA
// too: a bool [P, 1, S, T]; eager: the float [B, 1, S, T]) -> rotary cos / sin [P, S, rope] -> N x decoder layer ->
// norm -> lm_head -> loss (training) or the last logits (inference).
// Per layer: DeepseekV3RMSNorm, DeepseekV32Attention (engine/arch/decoders/parts/dsa_parts.h: MLA plus the
// DeepseekV32Indexer under no_grad, whose rotary is apply_rotary_pos_emb's rotate_half form, and the top-k mask;
// the top-k dies as the attention returns), residual, norm, the dense MLP or the MoE (deepseek_mlp_half), residual.
#include <string>
#include <vector>

#include "engine/arch/decoders/parts/dsa_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/errors.h"

namespace memplan {

void build_deepseek_v32(GraphBuilder& b, const TransformerSpec& s) {
  if (s.kv_lora_rank <= 0 || s.qk_rope_head_dim <= 0 || s.q_lora_rank <= 0)
    throw InputError("model.q_lora_rank", std::to_string(s.q_lora_rank),
                     "DeepSeek sparse attention needs q_lora_rank, kv_lora_rank and qk_rope_head_dim > 0");
  if (s.num_kv_heads != s.num_heads)
    throw InputError("config.num_key_value_heads", std::to_string(s.num_kv_heads),
                     "must equal num_attention_heads (" + std::to_string(s.num_heads) + ") for multi-head latent attention");
  build_dsa_model(b, s, rope, /*layers_return_topk=*/false);
}

}  // namespace memplan
