// AfmoeConfig (transformers 5.17 models/afmoe/configuration_afmoe.py) and what AfmoeAttention, AfmoeDecoderLayer,
// AfmoeSparseMoeBlock and AfmoeModel read of it (modeling_afmoe.py; engine/arch/decoders/moe/afmoe.cpp).
//
// Class defaults (the 5.17 dataclass fields): vocab 200192, hidden 2048, intermediate 6144, moe_intermediate_size
// 1408, 32 layers, num_dense_layers 1, 16 heads, num_key_value_heads None (=> heads), head_dim 128, silu,
// max_position_embeddings 16384, tie False, num_experts 64, num_experts_per_tok 6, num_shared_experts 2,
// route_scale 1.0, output_router_logits False, global_attn_every_n_layers 4, sliding_window 1024, layer_types None
// (=> "sliding_attention" unless (i + 1) % global_attn_every_n_layers == 0), attention_dropout 0.0, mup_enabled
// False, attention_bias False. The class is a strict dataclass: null where the modeling file computes with the value
// fails (num_dense_layers compared with the layer index, head_dim ** -0.5, moe_intermediate_size *
// num_shared_experts, num_experts / num_experts_per_tok of a MoE layer, global_attn_every_n_layers without
// layer_types), refused naming the field; layer_types must hold num_hidden_layers entries (validate_layer_type),
// each "sliding_attention" or "full_attention" (the layer picks its mask by the entry). Keys of the published
// configs that are not fields (route_norm, score_func, n_group, topk_group, num_expert_groups,
// num_limited_groups, use_grouped_mm) change nothing in 5.17: the router always normalises its sigmoid scores.
// Refused: output_router_logits true (capture_outputs then keeps every layer's router logits to the end: not
// modelled), a rope_type that changes more than inv_freq's values, hidden_act other than silu / swish.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_afmoe(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized afmoe weights are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "intermediate_size", "moe_intermediate_size", "num_hidden_layers",
                        "num_dense_layers", "num_attention_heads", "head_dim", "num_shared_experts",
                        "max_position_embeddings"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be an integer (the modeling file computes with it)");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 200192);
  s.hidden_size = r.positive({"hidden_size"}, 2048);
  s.intermediate_size = r.positive({"intermediate_size"}, 6144);
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 1408);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.first_dense_layers = r.non_negative({"num_dense_layers"}, 1);
  s.num_heads = r.positive({"num_attention_heads"}, 16);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(s.num_heads);
  check_kv_heads(r, s);
  s.head_dim = r.positive({"head_dim"}, 128);
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "afmoe is modelled with silu");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 16384);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = s.qkv_bias = s.o_bias = r.boolean({"attention_bias"}, false);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.scale_embedding = !r.explicit_null("mup_enabled") && r.boolean({"mup_enabled"}, false);
  check_rope_type(r, "afmoe");
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "every layer's router logits kept to the end of the forward are not modelled (set it false)");

  s.num_shared_experts = r.positive({"num_shared_experts"}, 2);
  const bool any_moe = s.first_dense_layers < s.num_layers;
  if (any_moe) {
    for (const char* k : {"num_experts", "num_experts_per_tok"})
      if (r.explicit_null(k))
        throw InputError(r.name(k), "null", "must be set: the layers from num_dense_layers on route over the experts");
  }
  s.num_experts = r.explicit_null("num_experts") ? 0 : r.positive({"num_experts"}, 64, kMaxExperts);
  s.num_experts_per_tok = r.explicit_null("num_experts_per_tok") ? 0 : r.positive({"num_experts_per_tok"}, 6);
  if (any_moe && s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_experts (" + std::to_string(s.num_experts) + ")");

  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null",
                     "must be set: create_sliding_window_causal_mask runs on every forward and needs a window");
  s.sliding_window = r.positive({"sliding_window"}, 1024);
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (!read_sliding_layer_types(r, s)) {
    if (r.explicit_null("global_attn_every_n_layers"))
      throw InputError(r.name("global_attn_every_n_layers"), "null",
                       "must be set when layer_types is not given (AfmoeConfig derives the layer types from it)");
    const int64_t every = r.positive({"global_attn_every_n_layers"}, 4);
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers[static_cast<size_t>(i)] = (i + 1) % every != 0;
  }
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
