// GlmConfig (transformers 5.17 models/glm/configuration_glm.py; the GLM-4 9B "-hf" checkpoints) and what
// GlmAttention / GlmRotaryEmbedding / GlmMLP read of it (models/glm/modeling_glm.py).
//
// Class defaults: vocab 151552, hidden 4096, intermediate 13696 (GlmMLP's fused gate_up_proj is 2 x that), 40
// layers, 32 heads, 2 kv heads, head_dim 128 (a class field: not hidden // heads), silu, attention_dropout 0.0,
// max_position_embeddings 131072, tie False, attention_bias True (q / k / v; o_proj and the MLP never have one),
// partial_rotary_factor 0.5 (__post_init__'s setdefault; a rope dict's value wins). num_key_value_heads or head_dim
// null stays None and the attention divides by it / raises it to a power: refused. No sliding window.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_glm(const ConfigReader& r) {
  // GlmConfig's fields, defaults and refusals are Glm4Config's (import_glm4.cpp); glm also checks pad_token_id.
  TransformerSpec s = import_glm_decoder(r, "glm", "GlmConfig: GlmAttention uses it");
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
