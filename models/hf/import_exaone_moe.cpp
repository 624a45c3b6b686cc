// ExaoneMoeConfig (transformers 5.17 models/exaone_moe/configuration_exaone_moe.py; LG K-EXAONE), modular from
// Exaone4Config, and what ExaoneMoeAttention (Exaone4Attention), ExaoneMoeTopkRouter / ExaoneMoeExperts /
// ExaoneMoeSparseMoEBlock (DeepseekV3's) and ExaoneMoeDecoderLayer read of it (modeling_exaone_moe.py).
//
// Class defaults: Exaone4Config's (vocab 102400, hidden 4096, intermediate 16384, 32 layers, 32 heads,
// num_key_value_heads 32, no head_dim field (getattr(config, "head_dim", hidden // heads)), silu,
// max_position_embeddings 2048, tie False, attention_dropout 0, sliding_window 4096, sliding_window_pattern 4,
// layer_types None), and: moe_intermediate_size 1024, num_experts 64, num_experts_per_tok 8, num_shared_experts 1,
// norm_topk_prob True, routed_scaling_factor 2.5, n_group 1, topk_group 1, first_k_dense_replace 1,
// mlp_layer_types None (=> "dense" for i < first_k_dense_replace, else "sparse").
// Layer types as Exaone4Config derives them (import_exaone4: layer_types, else sliding unless (i + 1) %
// sliding_window_pattern == 0, an integer pattern only). Unlike Exaone4Config, sliding_window is typed `int` in this
// strict dataclass: null is refused (so the full-attention layers never rotate: `self.sliding_window is None or
// self.is_sliding`), as are nulls of the other int fields. ExaoneMoeDecoderLayer builds ExaoneMoeSparseMoEBlock
// where config.mlp_layer_types[i] == "sparse" (spec.moe_layers), else ExaoneMoeMLP of intermediate_size. The
// router is DeepseekV3TopkRouter's noaux_tc (sigmoid scores + the fp32 e_score_correction_bias, group top-2 sums,
// top topk_group groups, top-k, renormalised with norm_topk_prob, * routed_scaling_factor). The MTP weights of the
// published checkpoint (mtp.*) are ignored on load: no module, no memory. Refused: hidden_act other than silu /
// swish, a shared-expert count of 0 (an MLP of width 0), quantization_config.
#include "models/hf_config_reader.h"
#include "models/hf/grouped_topk.h"

namespace memplan::hf {

TransformerSpec import_exaone_moe(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized exaone_moe weights are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                        "num_key_value_heads", "max_position_embeddings", "sliding_window", "moe_intermediate_size",
                        "num_experts", "num_experts_per_tok", "num_shared_experts", "n_group", "topk_group",
                        "first_k_dense_replace"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be an integer (ExaoneMoeConfig: int)");
  const std::string act = r.string({"hidden_act"}, "silu");
  if (act != "silu" && act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + act + "\"", "exaone_moe is modelled with silu");
  // Exaone4Config's fields, head_dim and the attention pattern.
  TransformerSpec s = import_exaone4(r);

  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 1024);
  s.num_experts = r.positive({"num_experts"}, 64, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 8);
  s.num_shared_experts = r.positive({"num_shared_experts"}, 1);
  s.moe_topk_method = "noaux_tc";
  s.moe_n_group = r.positive({"n_group"}, 1);
  s.moe_topk_group = r.positive({"topk_group"}, 1);
  s.moe_norm_topk_prob = r.boolean({"norm_topk_prob"}, true);
  if (s.num_experts_per_tok > s.num_experts)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed num_experts (" + std::to_string(s.num_experts) + ")");

  // mlp_layer_types, else "dense" below first_k_dense_replace (default 1), "sparse" after.
  const int64_t first_dense = r.non_negative({"first_k_dense_replace"}, 1);
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (const json* lt = r.raw("mlp_layer_types"); lt != nullptr && !lt->is_null()) {
    if (!lt->is_array() || static_cast<int64_t>(lt->size()) < s.num_layers)
      throw InputError(r.name("mlp_layer_types"), dump_short(*lt),
                       "must be a list of at least num_hidden_layers (" + std::to_string(s.num_layers) +
                           ") entries (ExaoneMoeDecoderLayer indexes it by layer)");
    for (size_t i = 0; i < static_cast<size_t>(s.num_layers); ++i) {
      const json& t = (*lt)[i];
      if (!t.is_string())
        throw InputError(r.name("mlp_layer_types") + "[" + std::to_string(i) + "]", dump_short(t),
                         "must be a string (\"sparse\" or \"dense\")");
      s.moe_layers[i] = t.get<std::string>() == "sparse" ? 1 : 0;
    }
  } else {
    for (int64_t i = first_dense; i < s.num_layers; ++i) s.moe_layers[static_cast<size_t>(i)] = 1;
  }
  bool any_moe = false;
  for (uint8_t m : s.moe_layers) any_moe = any_moe || m != 0;
  if (any_moe) check_grouped_topk(r, s, "ExaoneMoeTopkRouter");
  s.generate_without_eos = r.explicit_null("eos_token_id");  // class default 53
  return s;
}

}  // namespace memplan::hf
