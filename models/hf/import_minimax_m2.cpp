// MiniMaxM2Config (transformers 5.17 models/minimax_m2/configuration_minimax_m2.py) and what MiniMaxM2Attention,
// MiniMaxM2RotaryEmbedding, MiniMaxM2TopKRouter, MiniMaxM2Experts and MiniMaxM2SparseMoeBlock read of it
// (modeling_minimax_m2.py).
//
// Class defaults: vocab 200064, hidden 3072, intermediate_size 1536 (each expert's width; every layer is sparse),
// 62 layers, 48 heads, 8 kv heads, head_dim 128, silu, max_position_embeddings 196608, tie False,
// attention_dropout 0.0, num_experts_per_tok 8, num_local_experts 256 (attribute_map: num_experts),
// output_router_logits False, router_jitter_noise 0.0; rope_parameters None (default rope, theta 5e6).
// The rotary embedding covers int(head_dim * partial_rotary_factor) of each head: the factor from the rope dict,
// else the top-level key, else 1.0 (compute_default_rope_parameters' .get(..., 1.0)).
// The config is a strict dataclass: null for an int field fails its type check, refused here naming the field.
// Keys of the published config.json that no 5.17 class reads (use_qk_norm, qk_norm_type, attn_type_list,
// scoring_func, use_routing_bias, use_mtp, num_mtp_modules, ...) change nothing: MiniMaxM2Attention always has
// its q / k norms over the whole projection, the router is always sigmoid + bias, and no MTP module is built.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_minimax_m2(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized minimax_m2 weights are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                        "num_key_value_heads", "head_dim", "num_experts_per_tok", "num_local_experts",
                        "max_position_embeddings"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be an integer (MiniMaxM2Config: int)");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 200064);
  s.hidden_size = r.positive({"hidden_size"}, 3072);
  s.intermediate_size = r.positive({"intermediate_size"}, 1536);
  s.moe_intermediate_size = s.intermediate_size;  // MiniMaxM2Experts: config.intermediate_size
  s.num_layers = r.positive({"num_hidden_layers"}, 62, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 48);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 8);
  check_kv_heads(r, s);
  s.head_dim = r.positive({"head_dim"}, 128);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 196608);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for minimax_m2 (the experts' gate is modelled with silu)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.num_experts = r.positive({"num_local_experts", "num_experts"}, 256, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 8);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_local_experts (" + std::to_string(s.num_experts) + ")");
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "the router's auxiliary load-balancing loss is not modelled for minimax_m2");
  if (const auto j = r.opt_probability({"router_jitter_noise"}); j && *j > 0.0)
    throw InputError(r.name("router_jitter_noise"), std::to_string(*j),
                     "router jitter noise is not modelled for minimax_m2 (the class default is 0.0)");
  check_rope_type(r, "minimax_m2");
  std::string key;
  const double factor = partial_rotary_factor(r, 1.0, key);
  s.rotary_dim = rotary_dim_from_factor(r, key, factor, s.head_dim);
  return s;
}

}  // namespace memplan::hf
