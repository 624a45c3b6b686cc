// GraniteMoeConfig and GraniteMoeSharedConfig (transformers 5.17 models/granitemoe/configuration_granitemoe.py,
// models/granitemoeshared/configuration_granitemoeshared.py) and what their modeling files read of them.
//
// Class defaults (both): vocab 32000, hidden 4096, intermediate 11008 (each expert's width: GraniteMoeExperts reads
// config.intermediate_size), 32 layers, 32 heads, num_key_value_heads None => heads (__post_init__), silu,
// max_position_embeddings 2048, tie False, attention_bias False (q / k / v / o), attention_dropout 0, 2 of 8
// experts (num_local_experts, num_experts_per_tok), output_router_logits False, the four multipliers 1.0;
// granitemoeshared adds shared_intermediate_size 0 (no shared MLP). head_dim: getattr(config, "head_dim",
// hidden // heads). Every layer is sparse; the router always renormalises by a softmax over the top k (no
// norm_topk_prob key). The multipliers are Python floats in the forward (engine/arch/decoders/moe/granitemoe.cpp): they change
// no tensor's size, but a value that is not a number, or a logits_scaling that is not positive, is refused.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_granitemoe(const ConfigReader& r, const std::string& type) {
  TransformerSpec s = read_decoder_sizes(r, {32000, 4096, 11008, 32, 32});
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", type + " is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  for (const char* key : {"embedding_multiplier", "residual_multiplier", "attention_multiplier"})
    if (const json* v = r.raw(key); v && !v->is_null() && !v->is_number())
      throw InputError(r.name(key), dump_short(*v), "must be a number");
  r.opt_positive_number({"logits_scaling"});  // divides the logits
  check_rope_type(r, type.c_str());
  // No sliding window in either config class; a key in config.json would still reach the DynamicCache (it reads
  // config.sliding_window) while the mask stays fully causal.
  if (r.present("sliding_window"))
    throw InputError(r.name("sliding_window"), dump_short(*r.raw("sliding_window")),
                     "is not a field of " + type + "'s config; sliding-window attention is not modelled");
  s.num_experts = r.positive({"num_local_experts"}, 8, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 2);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_local_experts (" + std::to_string(s.num_experts) + ")");
  s.moe_intermediate_size = s.intermediate_size;  // GraniteMoeExperts: intermediate_dim = config.intermediate_size
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "the router auxiliary loss (load_balancing_loss_func) is not modelled");
  // GraniteMoeSharedConfig.shared_intermediate_size (int, default 0; > 0 builds GraniteMoeSharedMLP). GraniteMoeConfig
  // has no such field: the key would be an unused attribute there.
  if (type == "granitemoeshared") {
    s.granite_shared_intermediate_size = r.non_negative({"shared_intermediate_size"}, 0);
    if (s.granite_shared_intermediate_size > kMaxDim)
      throw InputError(r.name("shared_intermediate_size"), std::to_string(s.granite_shared_intermediate_size),
                       "exceeds the limit of " + std::to_string(kMaxDim));
  }
  return s;
}

}  // namespace memplan::hf
