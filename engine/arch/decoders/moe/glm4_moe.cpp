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
//   The feed-forward: Glm4MoeMLP (down(act(gate(x)) * up(x))) in the first first_k_dense_replace layers, then
//     Glm4MoeMoE, whose router, experts and MoE forward are DeepseekV3's statement for statement
//     (deepseek_parts.h): Glm4MoeTopkRouter (deepseek_route, noaux_tc: fp32 logits, sigmoid scores,
//     e_score_correction_bias, group top-2 sums, group mask, top-k, gathered weights, norm_topk_prob,
//     routed_scaling_factor), the routed experts through transformers' default experts implementation
//     (experts_grouped_mm: grouped_mm; generate()'s decode steps batched_mm), the shared experts' MLP
//     (moe_intermediate_size * n_shared_experts wide) over the block's input, added.
// Parameters per layer, registration order: self_attn q / k / v (weight, bias), o_proj, q_norm / k_norm
// (use_qk_norm); mlp: dense gate / up / down, or experts.gate_up_proj [E, 2I, H], experts.down_proj [E, H, I],
// gate.weight [E, H] (+ the fp32 e_score_correction_bias buffer [E]), shared_experts gate / up / down;
// input_layernorm, post_attention_layernorm. The MTP layer (num_nextn_predict_layers) is not built.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/deepseek_parts.h"
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
  bool moe = false;
  TensorId gate = kNoTensor, up = kNoTensor, down = kNoTensor;  // the dense MLP, or the shared experts
  ExpertsParams experts;
  TensorId router = kNoTensor;
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
  w.moe = i >= s.first_dense_layers;
  auto mlp = [&](const std::string& m, int64_t I) {
    w.gate = b.param(m + "gate_proj.weight", {I, H}, train);
    w.up = b.param(m + "up_proj.weight", {I, H}, train);
    w.down = b.param(m + "down_proj.weight", {H, I}, train);
  };
  if (w.moe) {
    ExpertsParams& e = w.experts;
    e.experts = s.num_experts;
    e.top_k = s.num_experts_per_tok;
    e.inter = s.moe_intermediate_size;
    e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {s.num_experts, checked_mul(2, e.inter), H}, train);
    e.down = b.param(p + "mlp.experts.down_proj", {s.num_experts, H, e.inter}, train);
    w.router = b.param(p + "mlp.gate.weight", {s.num_experts, H}, train);
    // torch.zeros(E, dtype=torch.float32): fp32 whatever the default dtype
    b.buffer(p + "mlp.gate.e_score_correction_bias", {s.num_experts}, DType::f32);
    mlp(p + "mlp.shared_experts.", checked_mul(s.moe_intermediate_size, s.num_shared_experts));
  } else {
    mlp(p + "mlp.", s.intermediate_size);
  }
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

// Glm4MoeMLP.forward: down_proj(act_fn(gate_proj(x)) * up_proj(x)).
TensorId mlp(GraphBuilder& b, const TransformerSpec& s, const Glm4MoeLayer& w, TensorId x) {
  TensorId act = activation(b, s.hidden_act, b.linear(x, w.gate));
  return b.linear(b.mul(act, b.linear(x, w.up)), w.down);
}

// Glm4MoeMoE.forward on x [B, S, H] (bound by the decoder layer until it returns).
TensorId moe(GraphBuilder& b, const TransformerSpec& s, const Glm4MoeLayer& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t T = checked_mul(xs[0], xs[1]), H = s.hidden_size;
  // The router and the MoE forward each take their own view(-1, H) of x: in backward each view hands its
  // gradient on to x's buffer as soon as it arrives (the experts' gather gradient is summed into it, and freed,
  // before the router's linear runs its backward; whole-run fp32 stream).
  const DeepseekRoute r = deepseek_route(b, s, b.view(x, {T, H}), w.router);
  b.hold(r.weights);  // topk_weights / topk_indices / `_` (the router logits): bound until the MoE returns
  b.hold(r.indices);
  const TensorId flat = b.view(x, {T, H});
  const TensorId routed = b.view(experts_grouped_mm(b, w.experts, flat, r.weights, r.indices), xs);
  const TensorId out = b.add(routed, mlp(b, s, w, x));
  for (TensorId t : {r.weights, r.indices, r.logits}) b.drop(t);
  return out;
}

TensorId glm4_moe_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const Glm4MoeLayer w = layer_params(b, s, i, !layer_frozen(b.config(), i));
  return llama_residual_blocks(
      b, h, w.in_norm, w.post_norm,
      [&](TensorId x, TensorId& weights) { return attention(b, s, w, x, c, weights); },
      [&](TensorId n2) { return w.moe ? moe(b, s, w, n2) : mlp(b, s, w, n2); });
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
