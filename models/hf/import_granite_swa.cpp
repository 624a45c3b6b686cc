// GraniteSWAConfig and GraniteMoeSWAConfig (transformers 5.17 models/granite_swa/configuration_granite_swa.py,
// models/granitemoe_swa/configuration_granitemoe_swa.py) and what their modeling files read of them.
//
// GraniteSWAConfig class defaults: vocab 100352, hidden 2560, intermediate 8192, 24 layers, 20 heads,
// num_key_value_heads 4 (None => heads), silu, max_position_embeddings 8192, tie_word_embeddings True,
// attention_bias / mlp_bias False, attention_dropout 0, the four multipliers 1.0, sliding_window 128.
// GraniteMoeSWAConfig class defaults: vocab 32000, hidden 4096, intermediate 11008 (each expert's width), 32 layers,
// 32 heads, num_key_value_heads None => heads, silu, max_position_embeddings 2048, tie False, attention_bias False,
// 2 of 8 experts, output_router_logits False, shared_intermediate_size 0 (no shared MLP), sliding_window 128.
// Both: layer_types None => "full_attention" for i % 4 == 0, "sliding_attention" otherwise (__post_init__);
// layer_rope_theta None => rope_theta for every layer; an entry 0 is a NoPE layer, and the model builds one rotary
// embedding per distinct non-zero theta (all of them run in every forward). head_dim: getattr(config, "head_dim",
// hidden // heads). Every layer has the learnable sinks [heads].
// Refused, naming the key: a null or non-positive sliding_window (create_sliding_window_causal_mask runs in every
// forward and raises without one), layer_types / layer_rope_theta that are not lists of num_hidden_layers entries
// of the right kind, a non-silu activation, non-numeric multipliers, a logits_scaling that is not positive,
// output_router_logits (the auxiliary loss is not modelled).
#include <set>

#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_granite_swa(const ConfigReader& r, const std::string& type) {
  const bool moe = type == "granitemoe_swa";
  TransformerSpec s = moe ? read_decoder_sizes(r, {32000, 4096, 11008, 32, 32})
                          : read_decoder_sizes(r, {100352, 2560, 8192, 24, 20, 4});
  if (r.explicit_null("num_key_value_heads")) {  // __post_init__: None => num_attention_heads
    s.num_kv_heads = s.num_heads;
    check_kv_heads(r, s);
  }
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, moe ? 2048 : 8192);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", type + " is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, !moe);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  if (!moe) s.mlp_bias = r.boolean({"mlp_bias"}, false);
  for (const char* key : {"embedding_multiplier", "residual_multiplier", "attention_multiplier"})
    if (const json* v = r.raw(key); v && !v->is_null() && !v->is_number())
      throw InputError(r.name(key), dump_short(*v), "must be a number");
  r.opt_positive_number({"logits_scaling"});  // divides the logits
  check_rope_type(r, type.c_str());

  // layer_types, then sliding_window (both masks are made in every forward, so the window must exist).
  const auto n = static_cast<size_t>(s.num_layers);
  s.sliding_layers.assign(n, 0);
  if (!read_sliding_layer_types(r, s))
    for (size_t i = 0; i < n; ++i) s.sliding_layers[i] = i % 4 == 0 ? 0 : 1;
  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null",
                     "create_sliding_window_causal_mask runs in every forward and needs a window");
  s.sliding_window = r.positive({"sliding_window"}, 128);

  // layer_rope_theta: NoPE layers and the number of distinct rotary tables.
  s.granite_swa_nope_layers.assign(n, 0);
  s.granite_swa_rope_tables = 1;
  if (const json* lt = r.raw("layer_rope_theta"); lt && !lt->is_null()) {
    if (!lt->is_array() || lt->size() != n)
      throw InputError(r.name("layer_rope_theta"), dump_short(*lt),
                       "must be a list of " + std::to_string(n) + " rope thetas (num_hidden_layers)");
    std::set<double> thetas;
    for (size_t i = 0; i < n; ++i) {
      const json& t = (*lt)[i];
      if (!t.is_number() || t.get<double>() < 0)
        throw InputError(r.name("layer_rope_theta") + "[" + std::to_string(i) + "]", dump_short(t),
                         "must be a non-negative number (0: no rotary embedding)");
      if (t.get<double>() == 0) s.granite_swa_nope_layers[i] = 1;
      else thetas.insert(t.get<double>());
    }
    s.granite_swa_rope_tables = static_cast<int64_t>(thetas.size());
  }

  if (moe) {
    s.num_experts = r.positive({"num_local_experts"}, 8, kMaxExperts);
    s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 2);
    if (s.num_experts_per_tok > s.num_experts)
      throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                       "must not exceed num_local_experts (" + std::to_string(s.num_experts) + ")");
    s.moe_intermediate_size = s.intermediate_size;  // GraniteMoeSWAExperts: intermediate_dim = config.intermediate_size
    if (r.boolean({"output_router_logits"}, false))
      throw InputError(r.name("output_router_logits"), "true",
                       "the router auxiliary loss (load_balancing_loss_func) is not modelled");
    s.granite_shared_intermediate_size = r.non_negative({"shared_intermediate_size"}, 0);
    if (s.granite_shared_intermediate_size > kMaxDim)
      throw InputError(r.name("shared_intermediate_size"), std::to_string(s.granite_shared_intermediate_size),
                       "exceeds the limit of " + std::to_string(kMaxDim));
  }
  return s;
}

}  // namespace memplan::hf
