// GraniteConfig (transformers 5.17 models/granite/configuration_granite.py) and the shapes GraniteAttention
// derives from it (models/granite/modeling_granite.py).
//
// Class defaults are LlamaConfig's: vocab 32000, hidden 4096, intermediate 11008, 32 layers, 32 heads,
// num_key_value_heads None => heads, silu, max_position_embeddings 2048, tie False, attention_bias / mlp_bias
// False, attention_dropout 0. head_dim: getattr(config, "head_dim", hidden // heads). No sliding window.
// The four multipliers (embedding_multiplier, residual_multiplier, attention_multiplier, logits_scaling; 1.0 by
// default) are Python floats in the forward: they change no tensor's size, but each is a statement the builder
// models (engine/arch/decoders/dense/granite.cpp), and a value that is not a number, or a logits_scaling that is not positive,
// is refused rather than ignored.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_granite(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {32000, 4096, 11008, 32, 32});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "granite is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  for (const char* key : {"embedding_multiplier", "residual_multiplier", "attention_multiplier"})
    if (const json* v = r.raw(key); v && !v->is_number())
      throw InputError(r.name(key), dump_short(*v), "must be a number");
  r.opt_positive_number({"logits_scaling"});  // divides the logits
  return s;
}

}  // namespace memplan::hf
