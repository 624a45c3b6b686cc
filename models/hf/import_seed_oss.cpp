// SeedOssConfig (transformers 5.17 models/seed_oss/configuration_seed_oss.py) and the shapes the modeling code
// derives from it (models/seed_oss/modeling_seed_oss.py).
//
// Defaults: vocab 155136, hidden 4096, intermediate 27648, 64 layers, 80 heads, num_key_value_heads 8 (null =>
// heads), head_dim 128 (null => hidden // heads), silu, max_position_embeddings 524288, tie False,
// attention_bias True (q / k / v), attention_out_bias False (o_proj), mlp_bias False, attention_dropout 0.1 (the
// SDPA / eager probabilities), residual_dropout 0.1 (after o_proj and after down_proj). No sliding window.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_seed_oss(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 155136);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 27648);
  s.num_layers = r.positive({"num_hidden_layers"}, 64, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 80);
  s.num_kv_heads = r.explicit_null("num_key_value_heads") ? s.num_heads : r.positive({"num_key_value_heads"}, 8);
  check_kv_heads(r, s);
  s.head_dim = r.explicit_null("head_dim")
                   ? head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size")
                   : r.positive({"head_dim"}, 128);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 524288);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "seed_oss is modelled with silu");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.qkv_bias = r.boolean({"attention_bias"}, true);
  s.attention_bias = s.qkv_bias;
  s.o_bias = r.boolean({"attention_out_bias"}, false);
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.1);
  s.resid_dropout = r.probability({"residual_dropout"}, 0.1);
  return s;
}

}  // namespace memplan::hf
