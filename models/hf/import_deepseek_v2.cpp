// DeepseekV2Config (transformers 5.17 models/deepseek_v2/configuration_deepseek_v2.py): multi-head latent
// attention and a MoE with shared experts after first_k_dense_replace dense layers.
//
// Class defaults (the dataclass fields of 5.17): vocab 102400, hidden 4096, intermediate 11008, 32 layers,
// 32 heads, num_key_value_heads None (=> heads), max_position_embeddings 2048, tie False, attention_bias False,
// attention_dropout 0.0, mlp_bias False, first_k_dense_replace 0, kv_lora_rank 512, q_lora_rank 1536 (None =>
// a plain q_proj), n_group None, n_routed_experts 64, n_shared_experts 2, qk_nope_head_dim 128, qk_rope_head_dim
// 64, topk_group None, topk_method "greedy", v_head_dim 128, num_experts_per_tok None, moe_intermediate_size
// 1407. validate_architecture: hidden_size % num_attention_heads == 0. The modeling file (DeepseekV2TopkRouter)
// needs num_experts_per_tok for every MoE layer and knows only the two topk methods "greedy" and
// "group_limited_greedy" (any other leaves topk_weights unbound: an error at the first forward).
#include "engine/checked.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

void require(const ConfigReader& r, bool ok, const std::string& key, const std::string& value, const std::string& why) {
  if (!ok) throw InputError(r.name(key), value, why);
}

}  // namespace

// The MLA and MoE keys deepseek_v2 and deepseek_v3 share (the v3 file calls it with its own defaults).
void import_deepseek_mla_moe(const ConfigReader& r, TransformerSpec& s, const DeepseekDefaults& d) {
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, d.vocab);
  s.hidden_size = r.positive({"hidden_size"}, d.hidden);
  s.intermediate_size = r.positive({"intermediate_size"}, d.intermediate);
  s.num_layers = r.positive({"num_hidden_layers"}, d.layers, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, d.heads);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(s.num_heads);
  check_kv_heads(r, s);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, d.max_positions);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.kv_lora_rank = r.positive({"kv_lora_rank"}, 512);
  s.q_lora_rank = r.explicit_null("q_lora_rank") ? 0 : r.positive({"q_lora_rank"}, 1536);
  s.qk_nope_head_dim = r.positive({"qk_nope_head_dim"}, 128);
  s.qk_rope_head_dim = r.positive({"qk_rope_head_dim"}, 64);
  require(r, s.qk_rope_head_dim % 2 == 0, "qk_rope_head_dim", std::to_string(s.qk_rope_head_dim),
          "must be even (the rotary embedding rotates pairs)");
  s.v_head_dim = r.positive({"v_head_dim"}, 128);
  s.head_dim = s.qk_nope_head_dim + s.qk_rope_head_dim;  // the query / key head dim the attention sees
  s.num_experts = r.positive({"n_routed_experts", "num_local_experts", "num_experts"}, d.routed_experts, kMaxExperts);
  s.num_shared_experts = r.positive({"n_shared_experts"}, d.shared_experts);
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, d.moe_intermediate);
  s.first_dense_layers = r.non_negative({"first_k_dense_replace"}, d.first_dense);
  const bool any_moe = s.first_dense_layers < s.num_layers;
  // num_experts_per_tok: None (the v2 default) is only usable when no layer routes.
  if (auto k = r.opt_positive({"num_experts_per_tok"}))
    s.num_experts_per_tok = *k;
  else if (d.experts_per_tok > 0)
    s.num_experts_per_tok = r.explicit_null("num_experts_per_tok") ? 0 : d.experts_per_tok;
  if (any_moe) {
    require(r, s.num_experts_per_tok > 0, "num_experts_per_tok", "null",
            "must be set: layers from first_k_dense_replace on route over the experts (top-k of None fails)");
    require(r, s.num_experts_per_tok <= s.num_experts, "num_experts_per_tok", std::to_string(s.num_experts_per_tok),
            "must not exceed n_routed_experts (" + std::to_string(s.num_experts) + ")");
  }
  s.moe_n_group = r.explicit_null("n_group") ? 0 : r.non_negative({"n_group"}, d.n_group);
  s.moe_topk_group = r.explicit_null("topk_group") ? 0 : r.non_negative({"topk_group"}, d.topk_group);
}

TransformerSpec import_deepseek_v2(const ConfigReader& r) {
  TransformerSpec s;
  import_deepseek_mla_moe(r, s, {102400, 4096, 11008, 32, 32, 2048, 64, 2, 1407, 0, 0, 0, 0});
  s.mlp_bias = r.boolean({"mlp_bias"}, false);  // DeepseekV2MLP (dense layers and shared experts)
  require(r, s.hidden_size % s.num_heads == 0, "num_attention_heads", std::to_string(s.num_heads),
          "must divide hidden_size (" + std::to_string(s.hidden_size) + ") (DeepseekV2Config.validate_architecture)");
  s.moe_topk_method = r.string({"topk_method"}, "greedy");
  const bool any_moe = s.first_dense_layers < s.num_layers;
  if (s.moe_topk_method != "greedy" && s.moe_topk_method != "group_limited_greedy")
    throw InputError(r.name("topk_method"), "\"" + s.moe_topk_method + "\"",
                     "DeepseekV2TopkRouter knows only \"greedy\" and \"group_limited_greedy\"");
  if (any_moe && s.moe_topk_method == "group_limited_greedy") {
    require(r, s.moe_n_group > 0 && s.num_experts % s.moe_n_group == 0, "n_group", std::to_string(s.moe_n_group),
            "must be a positive divisor of n_routed_experts (" + std::to_string(s.num_experts) +
                ") for group_limited_greedy routing");
    require(r, s.moe_topk_group > 0 && s.moe_topk_group <= s.moe_n_group, "topk_group", std::to_string(s.moe_topk_group),
            "must be in [1, n_group] for group_limited_greedy routing");
  }
  return s;
}

}  // namespace memplan::hf
