// Ernie4_5Config (transformers 5.17 models/ernie4_5/configuration_ernie4_5.py) and the shapes the modeling code
// derives from it (models/ernie4_5/modeling_ernie4_5.py).
//
// Defaults: vocab 103424, hidden 1024, intermediate 3072, 18 layers, 16 heads, num_key_value_heads 2 (null =>
// heads), head_dim 128 (null => hidden // heads), silu, max_position_embeddings 131072, tie True, use_bias False
// (a bias on q / k / v / o and on gate / up / down when True). The attention dropout is fixed at 0.0 in
// Ernie4_5Attention; there is no sliding window.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_ernie4_5(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 103424);
  s.hidden_size = r.positive({"hidden_size"}, 1024);
  s.intermediate_size = r.positive({"intermediate_size"}, 3072);
  s.num_layers = r.positive({"num_hidden_layers"}, 18, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 16);
  s.num_kv_heads = r.explicit_null("num_key_value_heads") ? s.num_heads : r.positive({"num_key_value_heads"}, 2);
  check_kv_heads(r, s);
  s.head_dim = r.explicit_null("head_dim")
                   ? head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size")
                   : r.positive({"head_dim"}, 128);
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (the rotary embedding pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "ernie4_5 is modelled with silu");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = r.boolean({"use_bias"}, false);
  s.qkv_bias = s.o_bias = s.mlp_bias = s.attention_bias;
  return s;
}

}  // namespace memplan::hf
