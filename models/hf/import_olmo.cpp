// OlmoConfig (transformers 5.17 models/olmo/configuration_olmo.py) and what OlmoModel / OlmoAttention read of it.
//
// Defaults: vocab 50304, hidden 4096, intermediate 11008, 32 layers, 32 heads, num_key_value_heads None =>
// heads, silu, max_position_embeddings 2048, tie False, attention_bias False, attention_dropout 0, clip_qkv None.
// No head_dim field: OlmoAttention reads getattr(config, "head_dim", hidden // heads), so a config.json key sets it.
// OlmoLayerNorm has no parameters and a fixed eps; there is no sliding window.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_olmo(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {50304, 4096, 11008, 32, 32, 0});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "olmo is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.clip_qkv = r.opt_positive_number({"clip_qkv"}).value_or(0.0);
  return s;
}

}  // namespace memplan::hf
