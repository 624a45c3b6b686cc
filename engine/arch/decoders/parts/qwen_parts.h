// What Qwen3ForCausalLM (engine/arch/decoders/dense/qwen3.cpp) and Qwen3MoeForCausalLM (engine/arch/decoders/moe/qwen3_moe.cpp) share:
// transformers 5.17 generates modeling_qwen3_moe.py from modeling_qwen3.py, so the two run the same embedding,
// masks, rotary embedding, attention (per-head q/k RMSNorm before the rotary embedding) and decoder layer; only
// the feed-forward block differs.
#pragma once
#include "engine/arch/builders.h"
#include "engine/arch/decoders/parts/llama_parts.h"

namespace memplan {

// The whole Qwen3 / Qwen3Moe causal LM: training forward + loss, or one inference pass (b.pass()). A layer with
// s.moe_layers[i] != 0 runs qwen3_moe_block, any other a SwiGLU MLP of intermediate_size.
void build_qwen3_model(GraphBuilder& b, const TransformerSpec& s);

// Qwen3MoeSparseMoeBlock (qwen3_moe.cpp): Qwen3MoeTopKRouter, then the experts through transformers 5.17's
// default grouped_mm implementation. `w`: gate = router [E, H], up = experts.gate_up_proj [E, 2I, H],
// down = experts.down_proj [E, H, I] (I = moe_intermediate_size).
TensorId qwen3_moe_block(GraphBuilder& b, const TransformerSpec& s, const FfnParams& w, TensorId x);

// The two halves of that block, which Qwen2MoeSparseMoeBlock (qwen2_moe.cpp) runs with a shared expert around
// them. qwen_moe_router: the TopK router over flat [T, H] (router [E, H]); what it returns (router_logits,
// routing_weights, selected_experts) is held, bound in the block's forward until release_route.
// qwen_moe_experts: the experts over the routed rows (grouped_mm; batched_mm in generate()'s decode steps),
// [T, H] in flat's dtype.
struct QwenMoeRoute {
  TensorId logits, weights, selected;
};
QwenMoeRoute qwen_moe_router(GraphBuilder& b, const TransformerSpec& s, TensorId router, TensorId flat);
TensorId qwen_moe_experts(GraphBuilder& b, const TransformerSpec& s, TensorId gate_up, TensorId down, TensorId flat,
                          const QwenMoeRoute& route);
void release_route(GraphBuilder& b, const QwenMoeRoute& r);


// A Qwen3 decoder layer's parameters (Qwen3DecoderLayer, and Qwen3VLTextDecoderLayer / Qwen3VLMoeTextDecoderLayer,
// the same statements), registered by qwen3_layer_params (qwen3.cpp) in model.parameters() order (which decides the
// optimizer's temporaries): self_attn.{q,k,v,o}_proj (weight, bias with attention_bias), self_attn.{q,k}_norm, then
// the MLP (Qwen3MLP gate / up / down; Qwen3MoeSparseMoeBlock registers the experts before the router:
// experts.gate_up_proj, experts.down_proj, gate.weight), input_layernorm, post_attention_layernorm.
struct Qwen3Layer {
  TensorId q, k, v, o, qb, kb, vb, ob, q_norm, k_norm, in_norm, post_norm;
  FfnParams ffn;
  bool moe = false;
};
Qwen3Layer qwen3_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train, bool moe);

// Qwen3Attention.forward (also Dots1Attention and Qwen3VLTextAttention: the same statements): q_norm / k_norm over
// the head views before the rotary embedding, then the attention from the cache update on (attention_o_proj).
// `w`: a layer struct with q, k, v, o, qb, kb, vb, ob, q_norm, k_norm. `weights`: eager attention's probabilities,
// held (see attention_core).
template <class Layer>
TensorId qwen3_attention(GraphBuilder& b, const TransformerSpec& s, const Layer& w, TensorId x, TensorId cos,
                         TensorId sin, TensorId mask, int64_t window, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  // q / k: the rotary backward hands contiguous [B, H, S, D] gradients to the transposed norm outputs; the
  // norm's elementwise backward keeps that layout, so the head view of the projection output, [B, S, H, D],
  // receives a gradient in another memory order and ViewBackward's reshape copies it (as Llama's head view does).
  auto normed_heads = [&](TensorId wt, TensorId bias, TensorId norm_w, int64_t heads) {
    TensorId proj = b.view_copying_grad(b.linear(x, wt, bias), {B, S, heads, hd});
    TensorId n = rms_norm(b, proj, norm_w, true);
    return b.view(n, {B, heads, S, hd});  // .transpose(1, 2)
  };
  TensorId q = normed_heads(w.q, w.qb, w.q_norm, nh);
  b.hold(q);  // query_states stays bound until apply_rotary_pos_emb's results rebind it
  TensorId k = normed_heads(w.k, w.kb, w.k_norm, nkv);
  b.hold(k);
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor;  // as in llama.cpp attention
  TensorId vp = b.linear(x, w.v, w.vb);
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd});
  const TensorId v_proj = v;
  b.hold(v_proj);  // value_states stays bound until the attention module returns (or the cache rebinds it)
  auto [qe, ke] = rope_qk(b, q, k, cos, sin);
  TensorId out = attention_o_proj(b, s, qe, ke, v, v_proj, mask, window, w.o, w.ob, weights);
  return out;
}

}  // namespace memplan
