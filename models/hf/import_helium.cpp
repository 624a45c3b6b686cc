// HeliumConfig (transformers 5.17 models/helium/configuration_helium.py) and the shapes the modeling code derives
// from it (models/helium/modeling_helium.py).
//
// Class defaults: vocab 48000, hidden 2560, intermediate 7040, 24 layers, 20 heads, num_key_value_heads 20 (an int
// field, not None => heads), head_dim 128 (a field: not hidden // heads), hidden_act "silu" (LlamaMLP's swiglu,
// the one modelled), attention_dropout 0, max_position_embeddings 4096, tie False, attention_bias False (q / k / v;
// o_proj never has one), mlp_bias False, rope default theta 100000 (changes inv_freq's values only).
// HeliumAttention.o_proj is nn.Linear(hidden_size, hidden_size) applied to heads * head_dim features: a config
// where they differ cannot run and is refused. num_key_value_heads / head_dim null: the strict int fields refuse it.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_helium(const ConfigReader& r) {
  for (const char* k : {"num_key_value_heads", "head_dim"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be a positive integer (HeliumConfig: int)");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 48000);
  s.hidden_size = r.positive({"hidden_size"}, 2560);
  s.intermediate_size = r.positive({"intermediate_size"}, 7040);
  s.num_layers = r.positive({"num_hidden_layers"}, 24, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 20);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 20);
  check_kv_heads(r, s);
  s.head_dim = r.positive({"head_dim"}, 128);
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  if (s.num_heads * s.head_dim != s.hidden_size)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim),
                     "num_attention_heads * head_dim must equal hidden_size (" + std::to_string(s.hidden_size) +
                         "): HeliumAttention.o_proj maps hidden_size features");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 4096);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "helium is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = s.qkv_bias = r.boolean({"attention_bias"}, false);
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  check_rope_type(r, "helium");
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
