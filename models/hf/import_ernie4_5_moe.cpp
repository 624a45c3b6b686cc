// Ernie4_5_MoeConfig (transformers 5.17 models/ernie4_5_moe/configuration_ernie4_5_moe.py) and the shapes the
// modeling code derives from it (models/ernie4_5_moe/modeling_ernie4_5_moe.py).
//
// Class defaults (ERNIE-4.5-21B-A3B): vocab 103424, hidden 2560, intermediate 12288 (the dense layers' MLP), 28
// layers, 20 heads, 4 kv heads, silu, max_position_embeddings 131072, tie True, use_bias False (a bias on q / k /
// v / o and on every MLP projection, shared experts included, when True; never on the experts' 3-d weights),
// moe_intermediate_size 1536, moe_k 6 of moe_num_experts 64 (attribute_map: num_experts_per_tok, num_experts),
// moe_num_shared_experts 2, moe_layer_start_index 1, moe_layer_end_index -1 (=> num_hidden_layers - 1),
// moe_layer_interval 1, moe_norm_min 1e-12 (a value, no memory), output_router_logits False.
// head_dim: the class has no such field; Ernie4_5_MoeAttention reads getattr(config, "head_dim", hidden // heads),
// so a config.json key wins. The attention dropout is fixed at 0.0; there is no sliding window.
// Layer i carries Ernie4_5_MoeSparseMoeBlock iff (i + 1) % moe_layer_interval == 0 and moe_layer_start_index <= i
// <= moe_layer_end_index (Ernie4_5_MoeDecoderLayer.__init__), else Ernie4_5_MoeMLP.
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// An int field Python compares with layer indices (any sign), absent or null -> dflt.
int64_t any_int(const ConfigReader& r, const char* key, int64_t dflt) {
  const json* v = r.raw(key);
  if (!v) return dflt;
  if (!v->is_number_integer() ||
      (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
    throw InputError(r.name(key), dump_short(*v), "must be an integer");
  return v->get<int64_t>();
}

}  // namespace

TransformerSpec import_ernie4_5_moe(const ConfigReader& r) {
  // num_key_value_heads null stays None (no __post_init__ fills it) and the attention divides by it.
  if (r.explicit_null("num_key_value_heads"))
    throw InputError(r.name("num_key_value_heads"), "null", "must be a positive integer (Ernie4_5_MoeConfig: int)");
  // head_dim null: getattr returns None and the attention's projections cannot be built.
  if (r.explicit_null("head_dim"))
    throw InputError(r.name("head_dim"), "null", "must be a positive integer when present");
  TransformerSpec s = read_decoder_sizes(r, {103424, 2560, 12288, 28, 20, 4});
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim),
                     "must be even (the rotary embedding pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "ernie4_5_moe is modelled with silu");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = r.boolean({"use_bias"}, false);
  s.qkv_bias = s.o_bias = s.mlp_bias = s.attention_bias;
  if (const json* w = r.raw("sliding_window"))
    throw InputError(r.name("sliding_window"), dump_short(*w), "ernie4_5_moe has no sliding-window attention");
  check_rope_type(r, "ernie4_5_moe");
  if (r.boolean({"output_router_logits"}, false))
    throw InputError(r.name("output_router_logits"), "true",
                     "the router auxiliary loss (load_balancing_loss_func) is not modelled");
  for (const char* k : {"moe_num_experts", "num_experts", "moe_k", "num_experts_per_tok"})
    if (r.explicit_null(k))  // None reaches nn.Parameter(torch.zeros(None, ...)) / torch.topk(..., None)
      throw InputError(r.name(k), "null", "must be a positive integer");
  s.num_experts = r.positive({"moe_num_experts", "num_experts"}, 64, kMaxExperts);
  s.num_experts_per_tok = r.positive({"moe_k", "num_experts_per_tok"}, 6);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("moe_k"), std::to_string(s.num_experts_per_tok),
                     "must not exceed moe_num_experts (" + std::to_string(s.num_experts) + ")");
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 1536);
  s.num_shared_experts = r.non_negative({"moe_num_shared_experts"}, 2);
  const int64_t start = any_int(r, "moe_layer_start_index", 1);
  int64_t end = any_int(r, "moe_layer_end_index", -1);
  if (end == -1) end = s.num_layers - 1;
  const int64_t interval = r.positive({"moe_layer_interval"}, 1);
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 0);
  bool any = false;
  for (int64_t i = 0; i < s.num_layers; ++i) {
    const bool sparse = (i + 1) % interval == 0 && i >= start && i <= end;
    s.moe_layers[static_cast<size_t>(i)] = sparse;
    any = any || sparse;
  }
  if (!any) s.moe_layers.clear();  // every layer dense: no router, no experts
  return s;
}

}  // namespace memplan::hf
