// HyperCLOVAXConfig (transformers 5.17 models/hyperclovax/configuration_hyperclovax.py) and the shapes
// HyperCLOVAXAttention / HyperCLOVAXDecoderLayer derive from it (models/hyperclovax/modeling_hyperclovax.py).
//
// Class defaults are GraniteConfig's: vocab 32000, hidden 4096, intermediate 11008, 32 layers, 32 heads,
// num_key_value_heads None => heads, head_dim None => hidden // heads (validate_architecture requires hidden % heads
// == 0 whatever head_dim says), silu, max_position_embeddings 2048, untied, attention_bias / mlp_bias False,
// attention_dropout 0; the four muP multipliers (embedding_multiplier, residual_multiplier, logits_scaling: 1.0;
// attention_multiplier None => head_dim ** -0.5) are Python floats in the forward, changing no tensor's size but
// each a statement the builder models; use_post_norm True (HyperclovaxFields: the peri-LN RMSNorms).
// Refused, naming the field: a multiplier that is not a number (logits_scaling multiplies, so zero or a negative
// value is accepted, unlike granite's divisor), heads not dividing hidden_size, hidden_act other than silu, rope
// types the engine does not model, a sliding_window key.
#include <memory>

#include "engine/arch/decoders/dense/hyperclovax_fields.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_hyperclovax(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {32000, 4096, 11008, 32, 32});
  if (s.hidden_size % s.num_heads != 0)  // HyperCLOVAXConfig.validate_architecture
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "must divide hidden_size (" + std::to_string(s.hidden_size) + ")");
  check_rotary_head_dim(r, s);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "hyperclovax is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  // logits_scaling multiplies the logits here (Granite divides by it): any number will do.
  for (const char* key : {"embedding_multiplier", "residual_multiplier", "attention_multiplier", "logits_scaling"})
    if (const json* v = r.raw(key); v && !v->is_number())
      throw InputError(r.name(key), dump_short(*v), "must be a number");
  if (const json* w = r.raw("sliding_window"))
    throw InputError(r.name("sliding_window"), dump_short(*w), "hyperclovax has no sliding-window attention");
  check_rope_type(r, "hyperclovax");
  check_padding_idx(r, s.vocab_size);
  auto f = std::make_shared<HyperclovaxFields>();
  f->use_post_norm = r.boolean({"use_post_norm"}, true);
  s.family_fields = f;
  return s;
}

}  // namespace memplan::hf
