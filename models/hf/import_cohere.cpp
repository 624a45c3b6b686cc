// CohereConfig (transformers 5.17 models/cohere/configuration_cohere.py) and what CohereAttention reads of it
// (models/cohere/modeling_cohere.py).
//
// Class defaults: vocab 256000, hidden 8192, intermediate 22528, 40 layers, 64 heads, num_key_value_heads None =>
// heads, silu, max_position_embeddings 8192, tie True, attention_bias False, attention_dropout 0, use_qk_norm
// False, logit_scale 0.0625 (a Python float: no tensor size). head_dim: getattr(config, "head_dim",
// hidden // heads). No sliding window (that is cohere2).
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_cohere(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {256000, 8192, 22528, 40, 64});
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 8192);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "cohere is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.qk_layernorm = r.boolean({"use_qk_norm"}, false);
  if (const json* v = r.raw("logit_scale"); v && !v->is_number())
    throw InputError(r.name("logit_scale"), dump_short(*v), "must be a number");
  return s;
}

}  // namespace memplan::hf
