// Olmo3Config (transformers 5.17 models/olmo3/configuration_olmo3.py) and the modeling code's reads of it
// (models/olmo3/modeling_olmo3.py).
//
// Defaults: vocab 50304, hidden 4096, intermediate 11008, 32 layers, 32 heads, num_key_value_heads None =>
// heads, silu, max_position_embeddings 2048, tie False, attention_bias False, attention_dropout 0,
// sliding_window 4096, layer_types None => "sliding_attention" unless (i + 1) % 4 == 0 (every fourth layer full).
// There is no head_dim field: Olmo3Attention reads getattr(config, "head_dim", hidden // heads), so a config.json
// key sets it; q_norm / k_norm are over heads * head_dim and Hkv * head_dim (as olmo2).
// Refused, naming the field: a null sliding_window (Olmo3Model.forward calls create_sliding_window_causal_mask on
// every forward, which raises without one), layer types other than sliding / full (the rotary embedding looks
// up rope_parameters[layer_type], which holds only those two), rope types beyond the modelled ones.
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// rope_parameters nested per layer type ({"full_attention": {...}, "sliding_attention": {...}}) or one dict
// (rope_scaling, or a rope_parameters without layer-type keys): each rope_type must be one the engine models
// (check_rope_type's list). The rope type changes inv_freq and attention_scaling, not what the forward allocates.
void check_olmo3_rope(const ConfigReader& r) {
  check_rope_type(r, "olmo3");
  const json* rp = r.raw("rope_parameters");
  if (!rp || !rp->is_object()) return;
  for (const char* lt : {"full_attention", "sliding_attention"}) {
    auto it = rp->find(lt);
    if (it == rp->end() || it->is_null()) continue;
    const std::string field = r.name("rope_parameters") + "." + lt;
    if (!it->is_object()) throw InputError(field, dump_short(*it), "must be an object");
    auto t = it->find("rope_type");
    if (t == it->end()) t = it->find("type");
    if (t != it->end() && !t->is_null() && *t != "default" && *t != "linear" && *t != "dynamic" && *t != "yarn" &&
        *t != "llama3")
      throw InputError(field + ".rope_type", dump_short(*t),
                       "is not modelled for olmo3 (default, linear, dynamic, yarn, llama3 are)");
  }
}

}  // namespace

TransformerSpec import_olmo3(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 50304);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 11008);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(s.num_heads);
  check_kv_heads(r, s);
  s.head_dim = rotary_head_dim_floor(r, s);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "olmo3 is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  check_olmo3_rope(r);

  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null",
                     "Olmo3Model always builds the sliding-window mask, which raises without a window");
  s.sliding_window = r.positive({"sliding_window"}, 4096);
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (!read_sliding_layer_types(r, s)) {
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers[static_cast<size_t>(i)] = (i + 1) % 4 != 0;
  }
  return s;
}

}  // namespace memplan::hf
