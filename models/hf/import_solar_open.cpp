// SolarOpenConfig (transformers 5.17 models/solar_open/configuration_solar_open.py; Upstage Solar Open), a
// Glm4MoeConfig subclass, and what SolarOpenAttention (LlamaAttention), SolarOpenRotaryEmbedding, SolarOpenMoE
// (Glm4MoeMoE) read of it (modeling_solar_open.py).
//
// Class defaults: vocab 196608, hidden 4096, 48 layers, 64 heads, 8 kv heads, head_dim 128 (a field here, unlike
// Glm4MoeConfig), silu, max_position_embeddings 131072, tie False, attention_bias False (q / k / v; o_proj never has
// one), attention_dropout 0.0, moe_intermediate_size 1280, num_experts_per_tok 8, n_shared_experts 1,
// n_routed_experts 128 (attribute_map: num_local_experts), routed_scaling_factor 1.0, n_group 1, topk_group 1,
// norm_topk_prob True, partial_rotary_factor 1.0 (__post_init__'s setdefault; a rope dict's value wins).
// intermediate_size, first_k_dense_replace, use_qk_norm and num_mtp_layers are deleted from the class (every layer
// is SolarOpenMoE, the attention has no qk norm, from_config builds no MTP layer): present in config.json (the
// published one carries intermediate_size 10240 and first_k_dense_replace 0) they are unread. LlamaAttention's
// apply_rotary_pos_emb rotates the whole head: a partial_rotary_factor other than 1 (a cos / sin narrower than the
// head) fails at the forward and is refused. The config is a strict dataclass: null for an int field is refused.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"
#include "models/hf/grouped_topk.h"

namespace memplan::hf {

TransformerSpec import_solar_open(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized solar_open weights are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                        "head_dim", "moe_intermediate_size", "num_experts_per_tok", "n_shared_experts",
                        "n_routed_experts", "n_group", "topk_group"})
    if (r.explicit_null(k))
      throw InputError(r.name(k), "null", "must be an integer (SolarOpenConfig: int)");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 196608);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.num_layers = r.positive({"num_hidden_layers"}, 48, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 64);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 8);
  check_kv_heads(r, s);
  s.head_dim = r.positive({"head_dim"}, 128);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for solar_open (silu, swish, gelu, gelu_pytorch_tanh, relu are)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = s.qkv_bias = r.boolean({"attention_bias"}, false);
  if (const json* w = r.raw("sliding_window"); w != nullptr && !w->is_null())
    throw InputError(r.name("sliding_window"), dump_short(*w), "solar_open has no sliding-window attention");
  check_rope_type(r, "solar_open");
  std::string key;
  const double factor = partial_rotary_factor(r, 1.0, key);
  if (factor != 1.0)
    throw InputError(r.name(key), dump_short(json(factor)),
                     "must be 1: LlamaAttention's apply_rotary_pos_emb rotates the whole head (a narrower cos / sin "
                     "does not broadcast against it)");
  s.rotary_dim = s.head_dim;

  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 1280);
  s.num_experts = r.positive({"n_routed_experts", "num_local_experts"}, 128, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 8);
  s.num_shared_experts = r.positive({"n_shared_experts"}, 1);
  s.first_dense_layers = 0;  // every layer is SolarOpenMoE
  // No dense MLP: config.intermediate_size is deleted and SolarOpenMLP is only built as the shared experts, of
  // moe_intermediate_size * n_shared_experts (the width the spec's limits check and the time model read).
  s.intermediate_size = s.moe_intermediate_size * s.num_shared_experts;
  s.moe_topk_method = "noaux_tc";
  s.moe_n_group = r.positive({"n_group"}, 1);
  s.moe_topk_group = r.positive({"topk_group"}, 1);
  s.moe_norm_topk_prob = r.boolean({"norm_topk_prob"}, true);
  s.generate_without_eos = !r.present("eos_token_id");  // class default None
  check_grouped_topk(r, s, "SolarOpenTopkRouter");
  return s;
}

}  // namespace memplan::hf
