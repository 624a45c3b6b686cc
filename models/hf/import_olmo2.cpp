// Olmo2Config (transformers 5.17 models/olmo2/configuration_olmo2.py) and the modeling code's reads of it.
//
// Defaults: vocab 50304, hidden 4096, intermediate 11008, 32 layers, 32 heads, num_key_value_heads None =>
// heads, silu, max_position_embeddings 2048, tie False, attention_bias False, attention_dropout 0. There is no
// head_dim field: Olmo2Attention reads getattr(config, "head_dim", hidden // heads), so a config.json key sets it;
// q_norm / k_norm are over heads * head_dim and Hkv * head_dim. No sliding window.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_olmo2(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 50304);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 11008);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(s.num_heads);
  check_kv_heads(r, s);
  if (auto hd = r.opt_positive({"head_dim"}))
    s.head_dim = *hd;
  else  // getattr(config, "head_dim", hidden_size // num_attention_heads): floor division, as Python's //
    s.head_dim = s.hidden_size / s.num_heads;
  if (s.head_dim == 0)
    throw InputError("config.num_attention_heads", std::to_string(s.num_heads),
                     "exceeds hidden_size (" + std::to_string(s.hidden_size) + "): head_dim would be 0");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("config.hidden_act", "\"" + s.hidden_act + "\"", "olmo2 is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  return s;
}

}  // namespace memplan::hf
