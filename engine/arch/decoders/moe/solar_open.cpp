// SolarOpenForCausalLM (transformers 5.17 models/solar_open/modeling_solar_open.py; Upstage Solar Open 100B), modular
// from glm4_moe and llama: Glm4MoeModel's forward with LlamaDecoderLayer's statements, LlamaAttention (not
// Glm4MoeAttention) and Glm4MoeMoE in every layer. Training forward + causal-LM loss or one inference pass.
//
// Stages: the skeleton of build_causal_lm_skeleton (phi_parts.h; SolarOpenModel is Glm4MoeModel: embed_tokens,
// create_causal_mask, position ids, cos / sin [P, S, head_dim] (partial_rotary_factor 1.0, the config's
// setdefault), the final RMSNorm, lm_head, loss) -> per layer LlamaDecoderLayer's statements (llama_residual_blocks)
// around:
//   SolarOpenAttention = LlamaAttention with o_proj's bias dropped: q / k / v (biases with attention_bias) and
//     their head views, apply_rotary_pos_emb over the whole head (Llama's rotate_half: no slices, no cat, unlike
//     Glm4MoeAttention's partial rotary), eager / SDPA, o_proj (llama_parts.h llama_attention);
//   SolarOpenMoE = Glm4MoeMoE in every layer (there is no first_k_dense_replace: the config class deletes the
//     field): the noaux_tc router, the routed experts through grouped_mm, the shared experts added
//     (engine/arch/decoders/parts/glm4_moe_parts.h).
// Parameters per layer, registration order: self_attn q / k / v (weight, bias), o_proj; mlp experts.gate_up_proj
// [E, 2I, H], experts.down_proj [E, H, I], gate.weight [E, H] (+ the fp32 e_score_correction_bias buffer [E]),
// shared_experts gate / up / down; input_layernorm, post_attention_layernorm.
#include "engine/arch/builders.h"

#include <string>

#include "engine/arch/decoders/parts/glm4_moe_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct SolarOpenLayer {
  LlamaLayerParams attn;
  Glm4MoeFfn ffn;
};

SolarOpenLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size;
  SolarOpenLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, /*o_bias=*/false, w.attn);
  w.ffn = glm4_moe_ffn_params(b, s, p, /*moe=*/true, train);
  w.attn.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.attn.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

TensorId solar_open_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const SolarOpenLayer w = layer_params(b, s, i, !layer_frozen(b.config(), i));
  return llama_residual_blocks(
      b, h, w.attn.in_norm, w.attn.post_norm,
      [&](TensorId x, TensorId& weights) {
        return llama_attention(b, s, w.attn, x, c.cos, c.sin, c.mask, c.window, weights);
      },
      [&](TensorId n2) { return glm4_moe_ffn(b, s, w.ffn, n2); });
}

}  // namespace

void build_solar_open(GraphBuilder& b, const TransformerSpec& s) {
  if (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.moe_intermediate_size <= 0 ||
      s.num_shared_experts <= 0 || s.moe_topk_method != "noaux_tc")
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "solar_open's MoE layers need experts, num_experts_per_tok, moe_intermediate_size, shared "
                     "experts and the noaux_tc router");
  if (s.rotary_dim > 0 && s.rotary_dim != s.head_dim)
    throw InputError("config.partial_rotary_factor", std::to_string(s.rotary_dim) + " of " + std::to_string(s.head_dim),
                     "LlamaAttention's rotary covers the whole head (apply_rotary_pos_emb has no pass-through part)");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError("model.hidden_act", s.hidden_act, "solar_open is modelled with silu, gelu or relu");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"model.embed_tokens.weight", "model.norm", false, false, solar_open_layer});
}

}  // namespace memplan
