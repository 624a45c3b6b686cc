// ArceeConfig (transformers 5.17 models/arcee/configuration_arcee.py) and the shapes the modeling code derives
// from it (models/arcee/modeling_arcee.py).
//
// Defaults: vocab 32000, hidden 2560, intermediate 18432, 32 layers, 32 heads, num_key_value_heads None =>
// heads, head_dim None => hidden // heads (validate_architecture requires hidden % heads == 0 whatever head_dim
// says), hidden_act "relu2" (the only activation modelled: ArceeMLP is down(act(up(x)))), max_position_embeddings
// 4096, tie False, attention_bias False (q / k / v / o), mlp_bias False (up / down), attention_dropout 0.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_arcee(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {32000, 2560, 18432, 32, 32});
  if (s.hidden_size % s.num_heads != 0)  // ArceeConfig.validate_architecture
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "must divide hidden_size (" + std::to_string(s.hidden_size) + ")");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 4096);
  s.hidden_act = r.string({"hidden_act"}, "relu2");
  if (s.hidden_act != "relu2")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "arcee is modelled with relu2 (ReLUSquaredActivation)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  return s;
}

}  // namespace memplan::hf
