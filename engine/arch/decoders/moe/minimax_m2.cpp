// MiniMaxM2ForCausalLM (transformers 5.17 models/minimax_m2/modeling_minimax_m2.py; MiniMax-M2, M2.1, M2.5),
// training forward + causal-LM loss or one inference pass with the DynamicCache.
//
// The modular file composes it from other models' classes, each mirrored here by the builder that already
// replays them:
//   MiniMaxM2Model / MiniMaxM2ForCausalLM: MixtralModel's and MixtralForCausalLM's statements (embed_tokens,
//     create_causal_mask, position ids, the rotary embedding, the layers, norm, lm_head (untied by default),
//     ForCausalLMLoss; output_router_logits False: no auxiliary loss): the skeleton of build_causal_lm_skeleton
//     (phi_parts.h), as glm4_moe.cpp uses it.
//   MiniMaxM2RotaryEmbedding = Glm4MoeRotaryEmbedding: cos / sin over rot = int(head_dim * partial_rotary_factor)
//     (the published checkpoints: 64 of 128).
//   MiniMaxM2Attention = FlexOlmoAttention with bias-free projections: q_norm(q_proj(x)) and k_norm(k_proj(x)),
//     RMSNorms over the whole projected width (nh * D and nkv * D: the published config's qk_norm_type
//     "per_layer"), then v_proj; the [B, S, H, D] views transposed to [B, H, S, D]; Glm4Moe's
//     apply_rotary_pos_emb (the four slices q[..., :rot], q[..., rot:], k[..., :rot], k[..., rot:], Llama's
//     rotation of q's then k's rotated part, then the two torch.cat), the cache update, SDPA / eager,
//     o_proj (glm4_moe.cpp's sequence after its projections: rotary_slices.h, cat_rotary_o_proj).
//     MiniMaxM2RMSNorm = MixtralRMSNorm (Llama's: weight * x.to(input dtype), builders.h rms_norm).
//   MiniMaxM2DecoderLayer: Llama's residual blocks (input_layernorm, attention, add, post_attention_layernorm,
//     the sparse MoE block, add; llama_residual_blocks).
//   MiniMaxM2SparseMoeBlock.forward(x [B, S, H]): hidden_states = x.view(-1, H); the router
//     MiniMaxM2TopKRouter(flat, e_score_correction_bias):
//       router_logits = F.linear(flat.to(weight.dtype), weight)                [T, E] (16-bit under autocast)
//       routing_weights = sigmoid(router_logits.float())                       [T, E] fp32 (saved output)
//       scores_for_choice = routing_weights + e_score_correction_bias          [T, E] fp32
//       _, top_k_index = topk(scores_for_choice, k, sorted=False)             [T, K] fp32 values, int64 ids
//       top_k_weights = routing_weights.gather(1, top_k_index)                [T, K] fp32
//       top_k_weights /= top_k_weights.sum(-1, keepdim=True)
//     returning (router_logits, top_k_weights, top_k_index), all three bound in the block's forward until it
//     returns (`_` the logits). The weights stay fp32 (no cast back, unlike Qwen3Moe's router), so the experts'
//     `proj_out * sample_weights_g` [T * K, H] and its sum are fp32, cast back at the end.
//     MiniMaxM2Experts = MixtralExperts through transformers' default experts implementation, grouped_mm
//     (deepseek_parts.h experts_grouped_mm; generate()'s decode steps batched_mm).
//   The e_score_correction_bias buffer [E] is created by torch.zeros in the default dtype (the model's dtype).
// Parameters per layer, registration order: self_attn q / k / v / o, q_norm [nh * D], k_norm [nkv * D];
// mlp.gate.weight [E, H], mlp.experts.gate_up_proj [E, 2I, H], mlp.experts.down_proj [E, H, I] (+ the buffer);
// input_layernorm, post_attention_layernorm. The checkpoints' multi-token-prediction modules (use_mtp) are not
// part of MiniMaxM2ForCausalLM: no memory.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/rotary_slices.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct MiniMaxLayer {
  TensorId q = kNoTensor, k = kNoTensor, v = kNoTensor, o = kNoTensor, qb = kNoTensor, kb = kNoTensor,
           vb = kNoTensor, ob = kNoTensor, q_norm = kNoTensor, k_norm = kNoTensor;
  TensorId router = kNoTensor, bias = kNoTensor;
  ExpertsParams experts;
  TensorId in_norm = kNoTensor, post_norm = kNoTensor;
};

MiniMaxLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, E = s.num_experts, I = s.moe_intermediate_size;
  MiniMaxLayer w;
  attention_projection_params(b, s, p, train, false, false, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {s.num_heads * s.head_dim}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {s.num_kv_heads * s.head_dim}, train);
  w.router = b.param(p + "mlp.gate.weight", {E, H}, train);
  ExpertsParams& e = w.experts;
  e.experts = E;
  e.top_k = s.num_experts_per_tok;
  e.inter = I;
  e.gate_up = b.param(p + "mlp.experts.gate_up_proj", {E, checked_mul(2, I), H}, train);
  e.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
  // torch.zeros(num_local_experts) at construction: the default dtype, i.e. the model's parameter dtype.
  w.bias = b.buffer(p + "mlp.e_score_correction_bias", {E}, b.param_dtype());
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// MiniMaxM2Attention.forward on the normed input x (the file header's statements).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const MiniMaxLayer& w, TensorId x,
                   const SkeletonContext& c, TensorId& weights) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = b.training() ? cfg.seq_len : b.pass().new_tokens, hd = s.head_dim,
                nh = s.num_heads, nkv = s.num_kv_heads;
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : hd;
  // query_states / key_states / value_states are bound to the norms' outputs and v_proj's, then rebound to their
  // head views, all three after the three projections (statement order: in backward the views' nodes, the last
  // created, run before any projection's: v's, k's and q's gradient copies first, then v_proj's backward; whole-run
  // bf16 eager stream). The rotary slices' backward hands contiguous [B, H, S, D] gradients to the transposed
  // views, which copy them back to the norms' [B, S, H * D] layout (olmo2_attention's views).
  const TensorId qn = rms_norm(b, b.linear(x, w.q), w.q_norm, true);
  b.hold(qn);
  const TensorId kn = rms_norm(b, b.linear(x, w.k), w.k_norm, true);
  b.hold(kn);
  const TensorId vp = b.linear(x, w.v);
  const TensorId q = b.view_copying_grad(qn, {B, nh, S, hd});
  b.hold(q);
  const TensorId k = b.view_copying_grad(kn, {B, nkv, S, hd});
  b.hold(k);
  b.drop(qn);
  b.drop(kn);
  // As llama_qkv_views: v's gradient keeps its layout only from the fused SDPA kernels.
  const bool math_sdpa = b.dtype(vp) == DType::f32 && nkv != nh;
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && c.mask == kNoTensor && !math_sdpa;
  const Shape vs{B, nkv, S, hd};
  const TensorId v = v_grad_in_layout ? b.view(vp, vs) : b.view_copying_grad(vp, vs);
  b.hold(v);  // value_states until the module returns or the cache update rebinds it
  const auto slices = rotary_slices(b, q, k, rot);
  const TensorId qr = rope(b, slices.q_rot, c.cos, c.sin);
  const TensorId kr = rope(b, slices.k_rot, c.cos, c.sin);
  const TensorId qe = b.cat("cat", {qr, slices.q_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(qe);
  const TensorId ke = b.cat("cat", {kr, slices.k_pass}, -1, std::nullopt, /*cast_part_grads=*/true);
  b.hold(ke);
  b.drop(q);
  b.drop(k);
  return cat_rotary_o_proj(b, s, qe, ke, v, v, c, w.o, w.ob, weights);
}

struct MiniMaxRoute {
  TensorId logits = kNoTensor, weights = kNoTensor, index = kNoTensor;
};

// MiniMaxM2TopKRouter.forward over flat [T, H] (the file header's statements). What it returns comes back held.
MiniMaxRoute route(GraphBuilder& b, const TransformerSpec& s, const MiniMaxLayer& w, TensorId flat) {
  const int64_t T = b.shape(flat)[0], K = s.num_experts_per_tok;
  MiniMaxRoute r;
  r.logits = b.linear(b.to(flat, b.dtype(w.router)), w.router);
  b.hold(r.logits);
  // router_logits.float(): the call's argument, freed once sigmoid has returned (its output is what is saved).
  const TensorId probs = b.unary("sigmoid", b.to(r.logits, DType::f32), false, true);
  b.hold(probs);  // routing_weights: a local until the router returns
  const TensorId choice = b.add(probs, w.bias);
  b.hold(choice);  // scores_for_choice
  auto top = b.generic({"topk", {choice}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  b.hold(top[0]);  // `_`
  r.index = top[1];
  TensorId tw = b.generic_one("gather", {probs, r.index}, {T, K}, DType::f32, {1});
  // `top_k_weights /= top_k_weights.sum(...)`: in place without autograd; under autograd as qwen3_moe.cpp's
  // router writes the same statement (the out-of-place form matched on Mixtral's whole-run stream).
  const TensorId sum = b.reduce_last("sum", tw, false);
  tw = b.training() ? b.binary("div", tw, sum, true, true) : b.inplace("div_", tw, false, {sum});
  r.weights = tw;
  b.hold(r.weights);
  b.hold(r.index);
  for (TensorId t : {top[0], choice, probs}) b.drop(t);
  return r;
}

// MiniMaxM2SparseMoeBlock.forward on x [B, S, H] (bound by the decoder layer until it returns).
TensorId moe(GraphBuilder& b, const TransformerSpec& s, const MiniMaxLayer& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t T = checked_mul(xs[0], xs[1]), H = s.hidden_size;
  const TensorId flat = b.view(x, {T, H});
  const MiniMaxRoute r = route(b, s, w, flat);
  const TensorId out = b.view(experts_grouped_mm(b, w.experts, flat, r.weights, r.index), xs);
  for (TensorId t : {r.weights, r.index, r.logits}) b.drop(t);
  return out;
}

TensorId minimax_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const MiniMaxLayer w = layer_params(b, s, i, !layer_frozen(b.config(), i));
  return llama_residual_blocks(
      b, h, w.in_norm, w.post_norm,
      [&](TensorId x, TensorId& weights) { return attention(b, s, w, x, c, weights); },
      [&](TensorId n2) { return moe(b, s, w, n2); });
}

}  // namespace

void build_minimax_m2(GraphBuilder& b, const TransformerSpec& s) {
  if (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts ||
      s.moe_intermediate_size <= 0)
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "minimax_m2 layers need experts, num_experts_per_tok <= num_experts and intermediate_size");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("model.hidden_act", s.hidden_act, "minimax_m2 is modelled with silu");
  if (s.sliding_window > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window), "minimax_m2 attends fully");
  const int64_t rot = s.rotary_dim > 0 ? s.rotary_dim : s.head_dim;
  if (rot % 2 != 0 || rot > s.head_dim)
    throw InputError("model.rotary_dim", std::to_string(rot), "must be even and at most head_dim");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"model.embed_tokens.weight", "model.norm", false, false, minimax_layer});
}

}  // namespace memplan
