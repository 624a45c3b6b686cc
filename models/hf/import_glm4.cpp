// Glm4Config (transformers 5.17 models/glm4/configuration_glm4.py) and what Glm4Attention / Glm4RotaryEmbedding /
// Glm4MLP read of it (models/glm4/modeling_glm4.py).
//
// Class defaults: vocab 151552, hidden 4096, intermediate 13696, 40 layers, 32 heads, 2 kv heads, head_dim 128 (a
// class field: not hidden // heads), silu, attention_dropout 0.0, max_position_embeddings 131072, tie False,
// attention_bias True (q / k / v; o_proj and the MLP never have one); partial_rotary_factor 0.5
// (__post_init__'s setdefault; a rope dict's value wins). num_key_value_heads or head_dim null stays None and
// the attention divides by it / raises it to a power: refused. No sliding window.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

// The rope dict's type (rope_scaling wins over rope_parameters): default, linear, dynamic, yarn and llama3 change
// the values of inv_freq and attention_scaling only (cos / sin keep their shapes); anything else is refused.
void check_rope_type(const ConfigReader& r, const char* family) {
  for (const char* k : {"rope_scaling", "rope_parameters"}) {
    const json* d = r.raw(k);
    if (!d) continue;
    if (!d->is_object()) throw InputError(r.name(k), dump_short(*d), "must be an object");
    auto t = d->find("rope_type");
    if (t == d->end()) t = d->find("type");
    if (t != d->end() && !t->is_null() && *t != "default" && *t != "linear" && *t != "dynamic" && *t != "yarn" &&
        *t != "llama3")
      throw InputError(r.name(std::string(k) + ".rope_type"), dump_short(*t),
                       std::string("is not modelled for ") + family + " (default, linear, dynamic, yarn, llama3 are)");
    return;
  }
}

void read_partial_rope(const ConfigReader& r, const char* family, TransformerSpec& s) {
  if (const json* w = r.raw("sliding_window"))
    throw InputError(r.name("sliding_window"), dump_short(*w),
                     std::string(family) + " has no sliding-window attention");
  check_rope_type(r, family);
  std::string key;
  const double factor = partial_rotary_factor(r, 0.5, key);
  s.rotary_dim = rotary_dim_from_factor(r, key, factor, s.head_dim);
}

TransformerSpec import_glm_decoder(const ConfigReader& r, const char* family, const char* null_why) {
  for (const char* k : {"num_key_value_heads", "head_dim"})
    if (r.explicit_null(k))
      throw InputError(r.name(k), "null", std::string("must be a positive integer (") + null_why + ")");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 151552);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 13696);
  s.num_layers = r.positive({"num_hidden_layers"}, 40, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 2);
  check_kv_heads(r, s);
  s.head_dim = r.positive({"head_dim"}, 128);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     std::string("activation not modelled for ") + family +
                         " (silu, swish, gelu, gelu_pytorch_tanh, relu are)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = s.qkv_bias = r.boolean({"attention_bias"}, true);
  read_partial_rope(r, family, s);
  return s;
}

TransformerSpec import_glm4(const ConfigReader& r) {
  return import_glm_decoder(r, "glm4", "Glm4Config: int; Glm4Attention uses it");
}

}  // namespace memplan::hf
