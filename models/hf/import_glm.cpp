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
  for (const char* k : {"num_key_value_heads", "head_dim"})
    if (r.explicit_null(k))
      throw InputError(r.name(k), "null", "must be a positive integer (GlmConfig: GlmAttention uses it)");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 151552);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 13696);
  s.num_layers = r.positive({"num_hidden_layers"}, 40, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 2);
  check_kv_heads(s);
  s.head_dim = r.positive({"head_dim"}, 128);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for glm (silu, swish, gelu, gelu_pytorch_tanh, relu are)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = s.qkv_bias = r.boolean({"attention_bias"}, true);
  read_partial_rope(r, "glm", s);
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
