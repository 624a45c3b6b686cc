// PhiConfig (transformers 5.17 models/phi/configuration_phi.py) and what PhiAttention / PhiModel read of it
// (models/phi/modeling_phi.py).
//
// Class defaults: vocab 51200, hidden 2048, intermediate 8192, 24 layers, 32 heads, num_key_value_heads None =>
// heads, resid_pdrop / embd_pdrop / attention_dropout 0.0, hidden_act gelu_new, max_position_embeddings 2048,
// tie False, qk_layernorm False; partial_rotary_factor 0.5 (__post_init__'s setdefault; a rope dict's value wins).
// head_dim: getattr(config, "head_dim", hidden // heads). q/k/v/dense, fc1/fc2 and lm_head all have biases.
// No sliding window.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_phi(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {51200, 2048, 8192, 24, 32});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "gelu_new");
  if (s.hidden_act != "gelu_new" && !is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for phi (gelu_new, gelu, gelu_pytorch_tanh, silu, swish, relu are)");
  s.resid_dropout = r.probability({"resid_pdrop"}, 0.0);
  s.embd_dropout = r.probability({"embd_pdrop"}, 0.0);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.qk_layernorm = r.boolean({"qk_layernorm"}, false);
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
  s.lm_head_bias = true;
  std::string key;
  const double factor = partial_rotary_factor(r, 0.5, key);
  s.rotary_dim = rotary_dim_from_factor(r, key, factor, s.head_dim);
  return s;
}

}  // namespace memplan::hf
