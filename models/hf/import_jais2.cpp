// Jais2Config (transformers 5.17 models/jais2/configuration_jais2.py) and the shapes the modeling code derives from it
// (models/jais2/modeling_jais2.py).
//
// Class defaults: vocab 150272, hidden 3328, intermediate 26624, 32 layers, 26 heads, num_key_value_heads None =>
// heads, head_dim None => hidden // heads (128; validate_architecture requires hidden % heads == 0 whatever head_dim
// says), hidden_act "relu2" (the only activation modelled: Jais2MLP is down(act(up(x)))), max_position_embeddings
// 8192, untied, attention_bias True (q / k / v / o), mlp_bias True (up / down), attention_dropout 0, layer_norm_eps
// 1e-5 (nn.LayerNorm with weight and bias: no memory effect). No sliding window, no multipliers.
// Refused, naming the field: heads not dividing hidden_size, another hidden_act, rope types the engine does not
// model, a sliding_window key (Jais2 has no sliding-window attention).
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_jais2(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {150272, 3328, 26624, 32, 26});
  if (s.hidden_size % s.num_heads != 0)  // Jais2Config.validate_architecture
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "must divide hidden_size (" + std::to_string(s.hidden_size) + ")");
  check_rotary_head_dim(r, s);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 8192);
  s.hidden_act = r.string({"hidden_act"}, "relu2");
  if (s.hidden_act != "relu2")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "jais2 is modelled with relu2 (ReLUSquaredActivation)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, true);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.mlp_bias = r.boolean({"mlp_bias"}, true);
  if (const json* w = r.raw("sliding_window"))
    throw InputError(r.name("sliding_window"), dump_short(*w), "jais2 has no sliding-window attention");
  check_rope_type(r, "jais2");
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
