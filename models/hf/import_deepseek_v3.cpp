// DeepseekV3Config (transformers 5.17 models/deepseek_v3/configuration_deepseek_v3.py).
//
// Class defaults: vocab 129280, hidden 7168, intermediate 18432, moe_intermediate_size 2048, 61 layers, 128 heads,
// num_key_value_heads 128, n_shared_experts 1, n_routed_experts 256, routed_scaling_factor 2.5, kv_lora_rank 512,
// q_lora_rank 1536, qk_rope_head_dim 64, v_head_dim 128, qk_nope_head_dim 128, n_group 8, topk_group 4,
// num_experts_per_tok 8, first_k_dense_replace 3, norm_topk_prob True, max_position_embeddings 4096, tie False,
// rope_interleave True, attention_bias False, attention_dropout 0.0. num_nextn_predict_layers (MTP) is not built
// by DeepseekV3ForCausalLM (its weights are ignored on load), so it holds no memory.
// DeepseekV3TopkRouter always routes over groups: view(-1, n_group, E / n_group).topk(2) needs n_group to divide
// the experts into groups of at least two, and topk(topk_group) at most n_group groups.
// quantization_config (the published checkpoint's fp8 block quantization) is refused: from_config builds the
// bf16 / fp32 modules and the fp8 kernels' memory is not modelled (drop the key to size the bf16 model).
#include "models/hf_config_reader.h"
#include "models/hf/grouped_topk.h"

namespace memplan::hf {

void check_grouped_topk(const ConfigReader& r, const TransformerSpec& s, const std::string& router) {
  const int64_t E = s.num_experts, G = s.moe_n_group;
  if (!(G > 0 && E % G == 0 && E / G >= 2))
    throw InputError(r.name("n_group"), r.explicit_null("n_group") ? "null" : std::to_string(G),
                     "must divide n_routed_experts (" + std::to_string(E) + ") into groups of at least 2 experts (" +
                         router + " takes the top 2 per group)");
  if (!(s.moe_topk_group > 0 && s.moe_topk_group <= G))
    throw InputError(r.name("topk_group"), r.explicit_null("topk_group") ? "null" : std::to_string(s.moe_topk_group),
                     "must be in [1, n_group (" + std::to_string(G) + ")]");
  if (s.num_experts_per_tok > E / G * s.moe_topk_group)
    throw InputError(r.name("num_experts_per_tok"), std::to_string(s.num_experts_per_tok),
                     "must not exceed the experts of topk_group groups (" + std::to_string(E / G * s.moe_topk_group) +
                         ")");
}

TransformerSpec import_deepseek_v3(const ConfigReader& r) {
  if ((r.raw("quantization_config") != nullptr))
    throw InputError("config.quantization_config", "present",
                     "quantized deepseek_v3 weights (fp8) are not modelled; remove the key to size the bf16 model");
  TransformerSpec s;
  import_deepseek_mla_moe(r, s, {129280, 7168, 18432, 61, 128, 4096, 256, 1, 2048, 3, 8, 8, 4});
  s.moe_topk_method = "noaux_tc";
  s.moe_norm_topk_prob = r.boolean({"norm_topk_prob"}, true);
  s.rope_interleave = r.boolean({"rope_interleave"}, true);
  if (s.first_dense_layers < s.num_layers) {
    check_grouped_topk(r, s, "DeepseekV3TopkRouter");
  }
  return s;
}

}  // namespace memplan::hf
