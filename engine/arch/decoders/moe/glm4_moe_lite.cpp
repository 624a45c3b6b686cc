// Glm4MoeLiteForCausalLM (transformers 5.17 models/glm4_moe_lite/modeling_glm4_moe_lite.py; GLM-4.7-Flash), training
// forward + causal-LM loss or one inference pass with the DynamicCache.
//
// The modeling file is modeling_deepseek_v3.py statement for statement (modular_glm4_moe_lite.py inherits
// DeepseekV3Attention, the MLP, router, experts and MoE) with three differences, none of which allocates
// differently:
//   - which layers carry the MoE: config.mlp_layer_types[i] == "sparse" (default ["dense"] + ["sparse"] * (N - 1))
//     instead of i >= first_k_dense_replace; the importer writes it into spec.moe_layers, which
//     deepseek_layer_params reads;
//   - Glm4MoeLiteTopkRouter's e_score_correction_bias is created fp32 explicitly (DeepSeek-V3's takes the default
//     dtype; both are _keep_in_fp32_modules_strict, which from_config does not apply): an fp32 [E] buffer;
//   - the rotary embedding's default inv_freq covers int(head_dim * partial_rotary_factor) dims with head_dim =
//     qk_rope_head_dim (attribute_map); any factor but 1 breaks the rotation's broadcast and is refused by the
//     importer, so cos / sin are DeepSeek-V3's [P, S, qk_rope_head_dim].
// So the whole model is deepseek_parts.h build_mla_decoder with the default variant: MLA attention (q_a_proj,
// q_a_layernorm, q_b_proj; kv_a_proj_with_mqa split into the latent (kv_a_layernorm) and the shared rope key;
// apply_rotary_pos_emb_interleave (rope_interleave, default True) or apply_rotary_pos_emb; the cache holds the two
// latents; expand_kv's kv_b_proj, split, new_empty key with two copy_; eager / SDPA; o_proj), the noaux_tc router
// (fp32 logits, sigmoid, bias, group top-2 sums over n_group, group mask, top-k, gather, norm_topk_prob,
// routed_scaling_factor), the routed experts through the default experts implementation (grouped_mm; generate()'s
// decode steps batched_mm) and the shared experts' SwiGLU (moe_intermediate_size * n_shared_experts) added.
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/deepseek_parts.h"

namespace memplan {

void build_glm4_moe_lite(GraphBuilder& b, const TransformerSpec& s) { build_mla_decoder(b, s, MlaVariant{}); }

}  // namespace memplan
