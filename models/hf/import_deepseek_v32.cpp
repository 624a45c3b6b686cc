// DeepseekV32Config (transformers 5.17 models/deepseek_v32/configuration_deepseek_v32.py).
//
// Class defaults (the dataclass fields of 5.17): vocab 129280, hidden 7168, intermediate 18432,
// moe_intermediate_size 2048, 61 layers, 128 heads, num_key_value_heads 128, n_shared_experts 1, n_routed_experts
// 256, routed_scaling_factor 2.5, kv_lora_rank 512, q_lora_rank 1536, qk_rope_head_dim 64, v_head_dim 128,
// qk_nope_head_dim 128, n_group 8, topk_group 4, num_experts_per_tok 8, norm_topk_prob True,
// max_position_embeddings 163840, tie False, attention_bias False, attention_dropout 0.0, index_topk 2048,
// index_head_dim 128, index_n_heads 64, first_k_dense_replace 3 (mlp_layer_types None => that many dense layers,
// then sparse). DeepseekV32Attention always applies the interleaved rotary (no rope_interleave switch) and builds
// its DeepseekV32Indexer from q_lora_rank (wq_b), so a null q_lora_rank fails at construction: refused. The indexer
// splits its heads into qk_rope_head_dim rotated and index_head_dim - qk_rope_head_dim passed dimensions: refused
// unless qk_rope_head_dim < index_head_dim. An explicit mlp_layer_types (a per-layer list the builder does not
// read) is refused; first_k_dense_replace says the same for the published configs. quantization_config (the
// published fp8 blocks) is refused as for deepseek_v3.
#include "models/hf_config_reader.h"
#include "models/hf/grouped_topk.h"

namespace memplan::hf {

TransformerSpec import_deepseek_v32(const ConfigReader& r) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError("config.quantization_config", "present",
                     "quantized deepseek_v32 weights (fp8) are not modelled; remove the key to size the bf16 model");
  if (r.raw("mlp_layer_types") != nullptr && !r.explicit_null("mlp_layer_types"))
    throw InputError(r.name("mlp_layer_types"), "present",
                     "a per-layer MLP list is not read; first_k_dense_replace (dense layers first, then MoE) is");
  if (r.explicit_null("q_lora_rank"))
    throw InputError(r.name("q_lora_rank"), "null",
                     "DeepseekV32Indexer builds wq_b from q_lora_rank (and the attention has no q_proj path)");
  TransformerSpec s;
  import_deepseek_mla_moe(r, s, {129280, 7168, 18432, 61, 128, 163840, 256, 1, 2048, 3, 8, 8, 4});
  s.moe_topk_method = "noaux_tc";
  s.moe_norm_topk_prob = r.boolean({"norm_topk_prob"}, true);
  s.rope_interleave = true;
  s.index_n_heads = r.positive({"index_n_heads"}, 64);
  s.index_head_dim = r.positive({"index_head_dim"}, 128);
  s.index_topk = r.positive({"index_topk"}, 2048);
  if (s.qk_rope_head_dim >= s.index_head_dim)
    throw InputError(r.name("index_head_dim"), std::to_string(s.index_head_dim),
                     "must exceed qk_rope_head_dim (" + std::to_string(s.qk_rope_head_dim) +
                         "): the indexer splits its heads into rotated and passed dimensions");
  if (s.first_dense_layers < s.num_layers) {
    check_grouped_topk(r, s, "DeepseekV32TopkRouter");
  }
  return s;
}

}  // namespace memplan::hf
