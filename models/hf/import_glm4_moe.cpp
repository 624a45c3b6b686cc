// Glm4MoeConfig (transformers 5.17 models/glm4_moe/configuration_glm4_moe.py) and what Glm4MoeAttention,
// Glm4MoeRotaryEmbedding, Glm4MoeTopkRouter, Glm4MoeExperts and Glm4MoeMoE read of it (modeling_glm4_moe.py).
//
// Class defaults: vocab 151552, hidden 4096, intermediate 10944, 46 layers, 96 heads, 8 kv heads, silu,
// max_position_embeddings 131072, tie False, attention_bias False (q / k / v; o_proj and the MLPs never have one),
// attention_dropout 0.0, moe_intermediate_size 1408, num_experts_per_tok 8, n_shared_experts 1, n_routed_experts
// 128 (attribute_map: num_local_experts), routed_scaling_factor 1.0, n_group 1, topk_group 1,
// first_k_dense_replace 1, norm_topk_prob True, use_qk_norm False; partial_rotary_factor 0.5 (__post_init__'s
// setdefault; a rope dict's value wins). The class has no head_dim field: Glm4MoeAttention takes
// getattr(config, "head_dim", hidden // heads) (floor division, the key when config.json has one; GLM-4.5 sets
// 128), so the class defaults alone give head_dim 42 and an odd rotary dimension 21, refused like every odd one.
// The config is a strict dataclass: null for an int field fails its type check, refused here naming the field.
// num_nextn_predict_layers (num_mtp_layers, the published checkpoints' MTP layer) is not built by from_config
// (its weights are ignored on load): no memory. Glm4MoeTopkRouter always routes over groups, which must split the
// experts in groups of at least two (topk(2) per group).
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"
#include "models/hf/grouped_topk.h"

namespace memplan::hf {

TransformerSpec import_glm4_moe(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized glm4_moe weights are not modelled; remove the key to size the bf16 model");
  for (const char* k : {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                        "num_key_value_heads", "head_dim", "moe_intermediate_size", "num_experts_per_tok",
                        "n_shared_experts", "n_routed_experts", "n_group", "topk_group", "first_k_dense_replace"})
    if (r.explicit_null(k))
      throw InputError(r.name(k), "null", "must be an integer (Glm4MoeConfig: int)");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 151552);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 10944);
  s.num_layers = r.positive({"num_hidden_layers"}, 46, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 96);
  s.num_kv_heads = r.positive({"num_key_value_heads"}, 8);
  check_kv_heads(r, s);
  s.head_dim = r.opt_positive({"head_dim"}).value_or(s.hidden_size / s.num_heads);
  if (s.head_dim <= 0)
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "exceeds hidden_size (" + std::to_string(s.hidden_size) + "): head_dim hidden // heads is 0");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for glm4_moe (silu, swish, gelu, gelu_pytorch_tanh, relu are)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = s.qkv_bias = r.boolean({"attention_bias"}, false);
  s.qk_head_rms_norm = r.boolean({"use_qk_norm"}, false);
  read_partial_rope(r, "glm4_moe", s);

  s.moe_intermediate_size = r.positive({"moe_intermediate_size"}, 1408);
  s.num_experts = r.positive({"n_routed_experts", "num_local_experts"}, 128, kMaxExperts);
  s.num_experts_per_tok = r.positive({"num_experts_per_tok"}, 8);
  s.num_shared_experts = r.positive({"n_shared_experts"}, 1);
  s.first_dense_layers = r.non_negative({"first_k_dense_replace"}, 1);
  s.moe_topk_method = "noaux_tc";
  s.moe_n_group = r.positive({"n_group"}, 1);
  s.moe_topk_group = r.positive({"topk_group"}, 1);
  s.moe_norm_topk_prob = r.boolean({"norm_topk_prob"}, true);
  s.generate_without_eos = !r.present("eos_token_id");  // class default None
  if (s.first_dense_layers < s.num_layers) {
    check_grouped_topk(r, s, "Glm4MoeTopkRouter");
  }
  return s;
}

}  // namespace memplan::hf
