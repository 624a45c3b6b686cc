// HunYuanMoEV1ForCausalLM (transformers 5.17 models/hunyuan_v1_moe/modeling_hunyuan_v1_moe.py; Hunyuan-A13B),
// training forward + causal-LM loss or one inference pass, on the shared CausalLM skeleton (phi_parts.h):
// embed_tokens, create_causal_mask, the rotary embedding (Llama's; the dynamic NTK-alpha variant changes inv_freq's
// values only), the layers, the final RMSNorm (LlamaRMSNorm's statements), lm_head.
//   HunYuanMoEV1DecoderLayer: LlamaDecoderLayer's statements around the attention and the MoE block.
//   HunYuanMoEV1Attention: hunyuan_v1_dense's (engine/arch/decoders/dense/hunyuan_v1_dense.cpp): projections, head
//     views, apply_rotary_pos_emb as Llama's, then query_layernorm / key_layernorm (RMSNorm over head_dim) on the
//     rotated q and k, each rebinding its variable once the norm returns; the normed k is what the cache stores.
//   HunYuanMoEV1Moe.forward(x):
//     hidden_states_mlp = self.shared_mlp(x)          LlamaMLP of intermediate_size, bound until the block returns
//     hidden_states = x.view(-1, H)                   flat [T, H]
//     _, routing_weights, selected_experts = self.gate(hidden_states)      all three bound until the block returns
//     final = self.experts(flat, selected, weights).reshape(B, S, H)        @use_experts_implementation: grouped_mm
//                                                     (batched_mm in generate()'s decode steps), experts of
//                                                     intermediate_size (deepseek_parts.h experts_grouped_mm)
//     return final + hidden_states_mlp
//   HunYuanMoEV1Gate.forward(flat): wg is nn.Linear(H, E, dtype=torch.float32): an fp32 parameter whatever the
//     model's dtype (the harness builds under torch.set_default_dtype; the explicit dtype wins), so
//       hidden_states = flat.float()                  a 16-bit model's fp32 copy [T, H] (saved by wg); else flat
//       router_logits = self.wg(hidden_states)        fp32 [T, E] (under autocast: the 16-bit GEMM, 16-bit logits)
//       routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)   fp32 [T, E], a local
//       routing_weights, selected_experts = torch.topk(routing_weights, top_k)  [T, K] fp32 / int64
//       routing_weights /= routing_weights.sum(-1, keepdim=True)     always renormalised (the out-of-place form
//                                                     under autograd, in place without: qwen_parts.h's router)
//       return router_logits, routing_weights.to(router_logits.dtype), selected_experts
//     so the experts weigh their rows by fp32 weights in fp32 and bf16 models ([R, H] fp32 products), by 16-bit
//     ones under autocast.
// Parameters per layer, registration order: self_attn.{q,k,v,o}_proj (bias with attention_bias),
// self_attn.query_layernorm, self_attn.key_layernorm, mlp.gate.wg [E, H] (fp32), mlp.experts.gate_up_proj
// [E, 2I, H], mlp.experts.down_proj [E, H, I], mlp.shared_mlp.{gate,up,down}_proj, input_layernorm,
// post_attention_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/deepseek_parts.h"
#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct HunyuanMoeLayer {
  TensorId q, k, v, o, qb, kb, vb, ob, q_norm, k_norm;
  TensorId wg, gate_up, down, shared_gate, shared_up, shared_down, in_norm, post_norm;
};

HunyuanMoeLayer layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, hd = s.head_dim, E = s.num_experts;
  HunyuanMoeLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = b.param(p + "self_attn.query_layernorm.weight", {hd}, train);
  w.k_norm = b.param(p + "self_attn.key_layernorm.weight", {hd}, train);
  w.wg = b.param(p + "mlp.gate.wg.weight", {E, H}, train, DType::f32);
  w.gate_up = b.param(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}, train);
  w.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
  w.shared_gate = b.param(p + "mlp.shared_mlp.gate_proj.weight", {I, H}, train);
  w.shared_up = b.param(p + "mlp.shared_mlp.up_proj.weight", {I, H}, train);
  w.shared_down = b.param(p + "mlp.shared_mlp.down_proj.weight", {H, I}, train);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// HunYuanMoEV1Attention.forward on the normed input x (hunyuan_v1_dense's statements).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const HunyuanMoeLayer& w, TensorId x,
                   const SkeletonContext& c, TensorId& weights) {
  auto [q, k, v] = llama_qkv_views(b, s, w, x, c.mask);
  const TensorId v_proj = v;
  b.hold(q);
  b.hold(k);
  auto [qe, ke] = rope_qk(b, q, k, c.cos, c.sin);
  const TensorId qn = rms_norm(b, qe, w.q_norm);
  b.hold(qn);
  b.drop(qe);
  const TensorId kn = rms_norm(b, ke, w.k_norm);
  b.hold(kn);
  b.drop(ke);
  return attention_o_proj(b, s, qn, kn, v, v_proj, c.mask, c.window, w.o, w.ob, weights);
}

// HunYuanMoEV1Moe.forward (the header's statements).
TensorId moe_block(GraphBuilder& b, const TransformerSpec& s, const HunyuanMoeLayer& w, TensorId x) {
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], S = xs[1], H = s.hidden_size, K = s.num_experts_per_tok;
  const int64_t T = checked_mul(B, S);
  const TensorId shared = swiglu_mlp(b, x, w.shared_gate, w.shared_up, w.shared_down);
  b.hold(shared);
  const TensorId flat = b.view(x, {T, H});
  // HunYuanMoEV1Gate.forward
  const TensorId h32 = b.to(flat, b.dtype(w.wg));
  b.hold(h32);  // the gate's hidden_states until it returns
  const TensorId logits = b.linear(h32, w.wg);
  b.hold(logits);  // bound to `_` until the block returns
  const TensorId probs = b.softmax_last(b.to(logits, DType::f32));
  b.hold(probs);  // routing_weights, rebound by the topk
  auto top = b.generic({"topk", {probs}, {{{T, K}, DType::f32}, {{T, K}, DType::i64}}, {}, {1}, {}, {}});
  b.drop(probs);
  TensorId top_w = top[0];
  const TensorId sum = b.reduce_last("sum", top_w, false);
  top_w = b.training() ? b.binary("div", top_w, sum, true, true) : b.inplace("div_", top_w, false, {sum});
  const TensorId weights = b.to(top_w, b.dtype(logits));
  b.hold(weights);
  b.hold(top[1]);
  b.drop(h32);
  ExpertsParams e;
  e.experts = s.num_experts;
  e.top_k = K;
  e.inter = s.intermediate_size;
  e.gate_up = w.gate_up;
  e.down = w.down;
  const TensorId routed = b.view(experts_grouped_mm(b, e, flat, weights, top[1]), {B, S, H});
  const TensorId out = b.add(routed, shared);
  for (TensorId t : {shared, logits, weights, top[1]}) b.drop(t);
  return out;
}

TensorId hunyuan_moe_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const HunyuanMoeLayer w = layer_params(b, s, "model.layers." + std::to_string(i) + ".", !layer_frozen(b.config(), i));
  return llama_residual_blocks(
      b, h, w.in_norm, w.post_norm, [&](TensorId x, TensorId& weights) { return attention(b, s, w, x, c, weights); },
      [&](TensorId n2) { return moe_block(b, s, w, n2); });
}

}  // namespace

void build_hunyuan_v1_moe(GraphBuilder& b, const TransformerSpec& s) {
  if (s.sliding_window > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window),
                     "hunyuan_v1_moe has no sliding-window attention");
  if (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.num_experts_per_tok > s.num_experts)
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "hunyuan_v1_moe needs num_experts >= moe_topk >= 1");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError("model.hidden_act", s.hidden_act, "hunyuan_v1_moe is modelled with silu");
  build_causal_lm_skeleton(b, s, SkeletonSpec{"model.embed_tokens.weight", "model.norm", false, false,
                                              hunyuan_moe_layer});
}

}  // namespace memplan
