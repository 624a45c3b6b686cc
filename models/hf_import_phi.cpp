// PhiConfig (transformers 5.17 models/phi/configuration_phi.py) and what PhiAttention / PhiModel read of it
// (models/phi/modeling_phi.py).
//
// Class defaults: vocab 51200, hidden 2048, intermediate 8192, 24 layers, 32 heads, num_key_value_heads None =>
// heads, resid_pdrop / embd_pdrop / attention_dropout 0.0, hidden_act gelu_new, max_position_embeddings 2048,
// tie False, qk_layernorm False; partial_rotary_factor 0.5 (__post_init__'s setdefault; a rope dict's value wins).
// head_dim: getattr(config, "head_dim", hidden // heads). q/k/v/dense, fc1/fc2 and lm_head all have biases.
// No sliding window.
#include "engine/arch/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_phi(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 51200);
  s.hidden_size = r.positive({"hidden_size"}, 2048);
  s.intermediate_size = r.positive({"intermediate_size"}, 8192);
  s.num_layers = r.positive({"num_hidden_layers"}, 24, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(s.num_heads);
  check_kv_heads(s);
  if (auto hd = r.opt_positive({"head_dim"}))
    s.head_dim = *hd;
  else
    s.head_dim = head_dim_from_hidden(s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
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
