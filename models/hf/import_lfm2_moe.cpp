// Lfm2MoeConfig (transformers 5.17 models/lfm2_moe/configuration_lfm2_moe.py) and the shapes the modeling code
// derives from it (models/lfm2_moe/modeling_lfm2_moe.py).
//
// Defaults: vocab 65536, hidden 2048, intermediate_size 7168 (Lfm2MoeMLP of the first num_dense_layers layers, as
// given: no block_auto_adjust_ff_dim), moe_intermediate_size 1792, 32 layers, 32 heads, 8 kv heads,
// max_position_embeddings 128000, tie_word_embeddings True (a `tie_embedding` key wins), conv_bias False,
// conv_L_cache 3, num_dense_layers 2, num_experts_per_tok 4, num_experts 32, use_expert_bias True,
// routed_scaling_factor 1.0, norm_topk_prob True, layer_types None.
// head_dim: getattr(config, "head_dim", hidden // heads) (the class has no such field; a config.json key sets it).
// The MLPs and experts are always silu (F.silu / ACT2FN["silu"]); there is no hidden_act.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_lfm2_moe(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 65536);
  s.hidden_size = r.positive({"hidden_size"}, 2048);
  s.intermediate_size = r.positive({"intermediate_size"}, 7168);
  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 1792);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 8);
  check_kv_heads(r, s);
  if (auto hd = r.opt_positive({"head_dim"}))
    s.head_dim = *hd;
  else
    s.head_dim = s.hidden_size / s.num_heads;  // Python's //
  if (s.head_dim == 0)
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "exceeds hidden_size (" + std::to_string(s.hidden_size) + "): head_dim would be 0");
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half splits it in two)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 128000);
  s.tie_word_embeddings = r.boolean({"tie_embedding", "tie_word_embeddings"}, true);
  s.hidden_act = "silu";
  s.lfm2_conv_kernel = r.positive({"conv_L_cache"}, 3, kMaxDim);
  s.lfm2_conv_bias = r.boolean({"conv_bias"}, false);
  s.first_dense_layers = r.non_negative({"num_dense_layers"}, 2);
  s.num_experts = r.positive({"num_experts"}, 32, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 4);
  if (s.first_dense_layers < s.num_layers && s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_experts (" + std::to_string(s.num_experts) + ")");
  s.lfm2_moe_expert_bias = r.boolean({"use_expert_bias"}, true);
  s.norm_topk_prob = r.boolean({"norm_topk_prob"}, true);
  if (const json* f = r.raw("routed_scaling_factor"); f && !f->is_number())  // a product whatever its value
    throw InputError(r.name("routed_scaling_factor"), dump_short(*f), "must be a number");
  if (const json* lt = r.raw("layer_types"))
    s.lfm2_conv_layers = read_lfm2_layer_types(*lt, s.num_layers);
  else
    throw InputError(r.name("layer_types"), "absent",
                     "lfm2_moe needs layer_types (Lfm2MoeConfig's default None leaves the layers undefined)");
  return s;
}

}  // namespace memplan::hf
