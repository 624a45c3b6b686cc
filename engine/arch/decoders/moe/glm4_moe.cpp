// Glm4MoeForCausalLM (transformers 5.17 models/glm4_moe/modeling_glm4_moe.py; GLM-4.5, GLM-4.5-Air, GLM-4.6),
// training forward + causal-LM loss or one inference pass with the DynamicCache.
//
// Stages: the skeleton of build_causal_lm_skeleton (phi_parts.h; Glm4MoeModel and Glm4MoeRotaryEmbedding are
// Glm4Model's and Glm4RotaryEmbedding's statements: embed_tokens, create_causal_mask, position ids, cos / sin
// [P, S, rot] over rot = int(head_dim * partial_rotary_factor), the final RMSNorm, lm_head, loss) -> per layer
// LlamaDecoderLayer's statements (llama_residual_blocks) around:
//   Glm4MoeAttention.forward: q_proj / k_proj / v_proj (biases with attention_bias, o_proj none) viewed
//     [B, S, H, D]; with use_qk_norm, q_norm(query_states) then k_norm(key_states) (RMSNorm over head_dim, after
//     all three projections: each view stays bound until its norm returns and rebinds it); the transposes;
//     apply_rotary_pos_emb: the four slices q[..., :rot], q[..., rot:], k[..., :rot], k[..., rot:] first (each a
//     SliceBackward view: zero-filled gradients of the sliced tensor's size), Llama's rotation (x * cos +
//     rotate_half(x) * sin) of q's then k's rotated part, then `q_embed = torch.cat([q_embed, q_pass], -1)` and
//     the same for k (rebindings: the rotated halves die once their cats exist) - glm4's order (glm4.cpp) with
//     Llama's rotate_half instead of GLM's interleaved one; then the attention on the cat outputs
//     (cat_rotary_o_proj: eager / SDPA, the cuDNN output copy, o_proj).
//   The feed-forward (engine/arch/decoders/parts/glm4_moe_parts.h): Glm4MoeMLP in the first first_k_dense_replace
//     layers, then Glm4MoeMoE (the DeepSeek-V3 router and experts, the shared experts added).
// Parameters per layer, registration order: self_attn q / k / v (weight, bias), o_proj, q_norm / k_norm
// (use_qk_norm); mlp: dense gate / up / down, or experts.gate_up_proj [E, 2I, H], experts.down_proj [E, H, I],
// gate.weight [E, H] (+ the fp32 e_score_correction_bias buffer [E]), shared_experts gate / up / down;
// input_layernorm, post_attention_layernorm. The MTP layer (num_nextn_predict_layers) is not built.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/glm4_moe_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/rotary_slices.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct Glm4MoeLayer {
  TensorId q = kNoTensor, k = kNoTensor, v = kNoTensor, o = kNoTensor, qb = kNoTensor, kb = kNoTensor,
           vb = kNoTensor, ob = kNoTensor, q_norm = kNoTensor, k_norm = kNoTensor;
  Glm4MoeFfn ffn;
  TensorId in_norm = kNoTensor, post_norm = kNoTensor;
};

Glm4MoeLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, hd = s.head_dim;
  Glm4MoeLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, /*o_bias=*/false, w);
  if (s.qk_head_rms_norm) {
    w.q_norm = b.param(p + "self_attn.q_norm.weight", {hd}, train);
    w.k_norm = b.param(p + "self_attn.k_norm.weight", {hd}, train);
  }
  w.ffn = glm4_moe_ffn_params(b, s, p, i >= s.first_dense_layers, train);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// The projections and their [B, H, S, D] head views. Without qk norm these are Llama's (llama_qkv_views). With
// it, the three projections run first, then q_norm and k_norm on the [B, S, H, D] views (each bound to
// query_states / key_states until its norm returns); the rotary backward hands contiguous [B, H, S, D] gradients
// to the transposed norm outputs, which the norm's elementwise backward keeps, so the projection's head view
// copies its gradient back (as qwen3.cpp's normed heads).
QkvViews projections(GraphBuilder& b, const TransformerSpec& s, const Glm4MoeLayer& w, TensorId x, TensorId mask) {
  if (!s.qk_head_rms_norm) return llama_qkv_views(b, s, w, x, mask);
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, hd = s.head_dim,
                nh = s.num_heads, nkv = s.num_kv_heads;
  const TensorId qv = b.view_copying_grad(b.linear(x, w.q, w.qb), {B, S, nh, hd});
  const TensorId kv = b.view_copying_grad(b.linear(x, w.k, w.kb), {B, S, nkv, hd});
  const TensorId vp = b.linear(x, w.v, w.vb);
  // As llama_qkv_views: v's gradient keeps its layout only from the fused SDPA kernels.
  const bool math_sdpa = b.dtype(vp) == DType::f32 && nkv != nh;
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor && !math_sdpa;
  const Shape vs{B, nkv, S, hd};
  const TensorId v = v_grad_in_layout ? b.view(vp, vs) : b.view_copying_grad(vp, vs);
  b.hold(v);
  const TensorId q = b.view(rms_norm(b, qv, w.q_norm, /*held_input=*/true), {B, nh, S, hd});
  const TensorId k = b.view(rms_norm(b, kv, w.k_norm, /*held_input=*/true), {B, nkv, S, hd});
  return {q, k, v};
}

TensorId attention(GraphBuilder& b, const TransformerSpec& s, const Glm4MoeLayer& w, TensorId x,
                   const SkeletonContext& c, TensorId& weights) {
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : s.head_dim;
  auto [q, k, v] = projections(b, s, w, x, c.mask);
  const TensorId v_proj = v;  // value_states (held) until the module returns or the cache rebinds it
  b.hold(q);  // query_states / key_states: rebound once apply_rotary_pos_emb has returned both
  b.hold(k);
  const auto slices = rotary_slices(b, q, k, rot);
  const TensorId qr = rope(b, slices.q_rot, c.cos, c.sin);
  const TensorId kr = rope(b, slices.k_rot, c.cos, c.sin);
  TensorId qe = b.cat("cat", {qr, slices.q_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(qe);
  TensorId ke = b.cat("cat", {kr, slices.k_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(ke);
  b.drop(q);
  b.drop(k);
  return cat_rotary_o_proj(b, s, qe, ke, v, v_proj, c, w.o, w.ob, weights);
}

TensorId glm4_moe_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const Glm4MoeLayer w = layer_params(b, s, i, !layer_frozen(b.config(), i));
  return llama_residual_blocks(
      b, h, w.in_norm, w.post_norm,
      [&](TensorId x, TensorId& weights) { return attention(b, s, w, x, c, weights); },
      [&](TensorId n2) { return glm4_moe_ffn(b, s, w.ffn, n2); });
}

}  // namespace

void build_glm4_moe(GraphBuilder& b, const TransformerSpec& s) {
  if (s.first_dense_layers < s.num_layers &&
      (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.moe_intermediate_size <= 0 ||
       s.num_shared_experts <= 0 || s.moe_topk_method != "noaux_tc"))
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "glm4_moe's MoE layers need experts, num_experts_per_tok, moe_intermediate_size, shared "
                     "experts and the noaux_tc router");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError("model.hidden_act", s.hidden_act, "glm4_moe is modelled with silu, gelu or relu");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"model.embed_tokens.weight", "model.norm", false, false, glm4_moe_layer});
}

}  // namespace memplan
