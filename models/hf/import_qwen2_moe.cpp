// Qwen2MoeConfig (transformers 5.17 models/qwen2_moe/configuration_qwen2_moe.py) and what the modeling code reads.
//
// Class defaults: vocab 151936, hidden 2048, intermediate 5632 (the dense layers' MLP), 24 layers, 16 heads,
// 16 kv heads, silu, max_position_embeddings 32768, tie False, qkv_bias True (o_proj has none), attention_dropout
// 0, decoder_sparse_step 1, moe_intermediate_size 1408, shared_expert_intermediate_size 5632, 4 of 60 experts,
// norm_topk_prob False, mlp_only_layers None => [], use_sliding_window False (sliding layers are refused: not
// modelled). head_dim: getattr(config, "head_dim", hidden // heads).
#include <algorithm>

#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_qwen2_moe(const ConfigReader& r) {
  // num_key_value_heads null stays None (no __post_init__ fills it) and Qwen2MoeAttention divides by it.
  if (r.explicit_null("num_key_value_heads"))
    throw InputError(r.name("num_key_value_heads"), "null", "must be a positive integer (Qwen2MoeConfig: int)");
  TransformerSpec s = read_decoder_sizes(r, {151936, 2048, 5632, 24, 16, 16});
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 32768);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "qwen2_moe is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.qkv_bias = r.boolean({"qkv_bias"}, true);
  s.attention_bias = s.qkv_bias;
  if (r.boolean({"use_sliding_window"}, false))
    throw InputError(r.name("use_sliding_window"), "true", "qwen2_moe's sliding-window layers are not modelled");
  if (const json* lt = r.raw("layer_types")) {
    const bool all_full = lt->is_array() && std::all_of(lt->begin(), lt->end(), [](const json& t) {
      return t.is_string() && t.get<std::string>() == "full_attention";
    });
    if (!all_full)
      throw InputError(r.name("layer_types"), dump_short(*lt), "only full_attention layers are modelled for qwen2_moe");
  }
  read_qwen_moe(r, s, {60, 4, 1408});
  s.shared_expert_intermediate_size = r.positive({"shared_expert_intermediate_size"}, 5632);
  return s;
}

}  // namespace memplan::hf
