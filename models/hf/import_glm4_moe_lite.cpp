// Glm4MoeLiteConfig (transformers 5.17 models/glm4_moe_lite/configuration_glm4_moe_lite.py) and what
// Glm4MoeLiteAttention, Glm4MoeLiteRotaryEmbedding, Glm4MoeLiteTopkRouter and Glm4MoeLiteDecoderLayer read of it
// (modeling_glm4_moe_lite.py; engine/arch/decoders/moe/glm4_moe_lite.cpp).
//
// Class defaults (the 5.17 dataclass fields): vocab 154880, hidden 2048, intermediate 10240, moe_intermediate_size
// 1536, 47 layers, 20 heads, num_key_value_heads 20, n_shared_experts 1, n_routed_experts 64 (attribute_map:
// num_local_experts), routed_scaling_factor 1.8, kv_lora_rank 512, q_lora_rank 768 (None => a plain q_proj),
// qk_rope_head_dim 64 (attribute_map: head_dim), v_head_dim 256, qk_nope_head_dim 192, n_group 1, topk_group 1,
// num_experts_per_tok 4, norm_topk_prob True, silu, max_position_embeddings 202752, tie False, rope_interleave True,
// mlp_layer_types None (=> ["dense"] + ["sparse"] * (num_hidden_layers - 1)), attention_bias False,
// attention_dropout 0.0. The class is a strict dataclass: null for an int field fails its type check (refused here
// naming the field). first_k_dense_replace (in the published config.json) is not a field and is not read: only
// mlp_layer_types decides the MoE layers (validate_layer_type returns before checking it, the class having no
// layer_types: a list shorter than num_hidden_layers fails in the decoder layer's constructor, refused here; an
// entry other than "sparse" builds the dense MLP). num_nextn_predict_layers (the MTP layer) is not built by
// from_config: no memory. Refused: hidden_act other than silu / swish, num_key_value_heads != num_attention_heads
// (the MLA builder's check), a partial_rotary_factor giving other than qk_rope_head_dim rotary dims (cos / sin would
// not broadcast against q_rot), a router whose groups cannot hold the top 2 (view(-1, n_group, E / n_group).topk(2)),
// and quantization_config.
#include <cmath>

#include "models/hf_config_reader.h"
#include "models/hf/grouped_topk.h"

namespace memplan::hf {

TransformerSpec import_glm4_moe_lite(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized glm4_moe_lite weights are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "intermediate_size", "moe_intermediate_size", "num_hidden_layers",
                        "num_attention_heads", "num_key_value_heads", "n_shared_experts", "n_routed_experts",
                        "kv_lora_rank", "qk_rope_head_dim", "v_head_dim", "qk_nope_head_dim", "n_group", "topk_group",
                        "num_experts_per_tok", "max_position_embeddings"})
    if (r.explicit_null(k)) throw InputError(r.name(k), "null", "must be an integer (Glm4MoeLiteConfig: int)");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 154880);
  s.hidden_size = r.positive({"hidden_size"}, 2048);
  s.intermediate_size = r.positive({"intermediate_size"}, 10240);
  s.num_layers = r.positive({"num_hidden_layers"}, 47, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 20);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 20);
  check_kv_heads(r, s);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 202752);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")  // the MLA builder's MLPs and experts replay silu
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "glm4_moe_lite is modelled with silu");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.kv_lora_rank = r.positive({"kv_lora_rank"}, 512);
  s.q_lora_rank = r.explicit_null("q_lora_rank") ? 0 : r.positive({"q_lora_rank"}, 768);
  s.qk_nope_head_dim = r.positive({"qk_nope_head_dim"}, 192);
  s.qk_rope_head_dim = r.positive({"qk_rope_head_dim"}, 64);
  if (s.qk_rope_head_dim % 2 != 0)
    throw InputError(r.name("qk_rope_head_dim"), std::to_string(s.qk_rope_head_dim),
                     "must be even (the rotary embedding rotates pairs)");
  s.v_head_dim = r.positive({"v_head_dim"}, 256);
  s.head_dim = s.qk_nope_head_dim + s.qk_rope_head_dim;  // the query / key head dim the attention sees
  s.rope_interleave = r.boolean({"rope_interleave"}, true);
  check_rope_type(r, "glm4_moe_lite");
  {
    std::string key;
    const double factor = partial_rotary_factor(r, 1.0, key);
    const double dims = factor * static_cast<double>(s.qk_rope_head_dim);
    if (!(std::fabs(std::floor(dims) - static_cast<double>(s.qk_rope_head_dim)) < 1e-9))
      throw InputError(r.name(key), std::to_string(factor),
                       "must be 1: the rotary embedding covers int(qk_rope_head_dim * factor) dims and the rotation "
                       "needs all " + std::to_string(s.qk_rope_head_dim) + " of q_rot / k_rot");
  }

  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 1536);
  s.num_experts = r.positive({"n_routed_experts", "num_local_experts"}, 64, kMaxExperts);
  s.num_shared_experts = r.positive({"n_shared_experts"}, 1);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 4);
  s.moe_topk_method = "noaux_tc";
  s.moe_n_group = r.positive({"n_group"}, 1);
  s.moe_topk_group = r.positive({"topk_group"}, 1);
  s.moe_norm_topk_prob = r.boolean({"norm_topk_prob"}, true);

  // mlp_layer_types: config.mlp_layer_types[i] == "sparse" builds Glm4MoeLiteMoE.
  s.moe_layers.assign(static_cast<size_t>(s.num_layers), 1);
  s.moe_layers[0] = 0;
  if (const json* lt = r.raw("mlp_layer_types")) {
    if (!lt->is_array() || static_cast<int64_t>(lt->size()) < s.num_layers)
      throw InputError(r.name("mlp_layer_types"), dump_short(*lt),
                       "must be a list of at least num_hidden_layers (" + std::to_string(s.num_layers) +
                           ") entries (Glm4MoeLiteDecoderLayer indexes it by layer)");
    for (size_t i = 0; i < static_cast<size_t>(s.num_layers); ++i) {
      const json& t = (*lt)[i];
      if (!t.is_string())
        throw InputError(r.name("mlp_layer_types") + "[" + std::to_string(i) + "]", dump_short(t),
                         "must be a string (\"sparse\" or \"dense\")");
      s.moe_layers[i] = t.get<std::string>() == "sparse" ? 1 : 0;
    }
  }
  bool any_moe = false;
  for (uint8_t m : s.moe_layers) any_moe = any_moe || m != 0;
  // first_dense_layers stays 0: deepseek_layer_params reads moe_layers. An all-dense model routes nothing.
  if (any_moe) {
    check_grouped_topk(r, s, "Glm4MoeLiteTopkRouter");
  }
  check_padding_idx(r, s.vocab_size);
  return s;
}

}  // namespace memplan::hf
