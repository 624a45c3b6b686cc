// Dots1Config (transformers 5.17 models/dots1/configuration_dots1.py; rednote-hilab dots.llm1) and what
// models/dots1/modeling_dots1.py reads of it.
//
// Class defaults: vocab 152064, hidden 4608, intermediate 10944 (the dense layers' MLP), moe_intermediate_size 1408,
// 62 layers, 32 heads, num_key_value_heads 32 (None => heads), n_shared_experts None, n_routed_experts None,
// num_experts_per_tok None, n_group 1, topk_group 1, first_k_dense_replace 0, norm_topk_prob False,
// routed_scaling_factor 1.0, hidden_act silu (the one modelled), max_position_embeddings 2048, tie False,
// attention_bias False (q / k / v / o), attention_dropout 0, sliding_window 4096, max_window_layers 62,
// layer_types None => "sliding_attention" for layer i >= max_window_layers when sliding_window is not None.
// head_dim: Dots1Attention reads getattr(config, "head_dim", hidden // heads) (a head_dim key wins).
// With a MoE layer (first_k_dense_replace < num_hidden_layers), n_routed_experts / num_experts_per_tok /
// n_shared_experts None cannot build (Dots1Experts / the router / the shared MLP multiply by them): refused naming
// the key; the router's groups as DeepseekV3TopkRouter's (n_group divides the experts into groups of >= 2,
// 1 <= topk_group <= n_group, top-k within the kept groups' experts).
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_dots1(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {152064, 4608, 10944, 62, 32, 32});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "dots1 is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 1408);
  s.first_dense_layers = r.non_negative({"first_k_dense_replace"}, 0);
  if (s.first_dense_layers < s.num_layers) {
    for (const char* k : {"n_routed_experts", "num_experts_per_tok", "n_shared_experts"})
      if (!r.present(k))
        throw InputError(r.name(k), r.explicit_null(k) ? "null" : "absent (None)",
                         "must be a positive integer when a layer is a MoE layer (first_k_dense_replace < "
                         "num_hidden_layers)");
    for (const char* k : {"n_group", "topk_group"})
      if (r.explicit_null(k))
        throw InputError(r.name(k), "null",
                         "must be a positive integer: Dots1TopkRouter views the scores by it (None raises)");
    s.num_experts = r.positive({"n_routed_experts", "num_local_experts"}, 1);
    s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 1);
    s.num_shared_experts = r.positive({"n_shared_experts"}, 1);
    s.moe_n_group = r.positive({"n_group"}, 1);
    s.moe_topk_group = r.positive({"topk_group"}, 1);
    const int64_t E = s.num_experts, G = s.moe_n_group;
    if (!(E % G == 0 && E / G >= 2))
      throw InputError(r.name("n_group"), std::to_string(G),
                       "must divide n_routed_experts (" + std::to_string(E) +
                           ") into groups of at least 2 experts (the router takes the top 2 per group)");
    if (s.moe_topk_group > G)
      throw InputError(r.name("topk_group"), std::to_string(s.moe_topk_group),
                       "must be in [1, n_group (" + std::to_string(G) + ")]");
    if (s.num_experts_per_tok > E / G * s.moe_topk_group)
      throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                       "must not exceed the experts of topk_group groups (" +
                           std::to_string(E / G * s.moe_topk_group) + ")");
  }
  s.moe_topk_method = "noaux_tc";
  s.moe_norm_topk_prob = r.boolean({"norm_topk_prob"}, false);
  // Sliding layers: layer_types, else i >= max_window_layers while sliding_window is not None.
  s.sliding_window = r.explicit_null("sliding_window") ? 0 : r.positive({"sliding_window"}, 4096);
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (!read_sliding_layer_types(r, s)) {
    const int64_t first = r.non_negative({"max_window_layers"}, 62);
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers[static_cast<size_t>(i)] = s.sliding_window > 0 && i >= first;
  }
  bool any = false;
  for (uint8_t v : s.sliding_layers) any = any || v;
  if (any && s.sliding_window <= 0)
    throw InputError(r.name("sliding_window"), "null", "must be set when layer_types has sliding_attention layers");
  if (!any) s.sliding_window = 0;
  check_rope_type(r, "dots1");
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
