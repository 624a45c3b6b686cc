// OlmoeForCausalLM (transformers 5.17 models/olmoe/modeling_olmoe.py), training forward + loss or one inference
// pass, on the shared CausalLM skeleton (phi_parts.h: embedding, causal mask, rotary cos / sin in the hidden
// dtype as LlamaRotaryEmbedding casts them, the layer loop, the final OlmoeRMSNorm, lm_head, loss).
//
// OlmoeDecoderLayer is Llama's pre-norm layer: h + attn(input_layernorm(h)), then h + moe(post_attention_layernorm(h)).
//   OlmoeRMSNorm is LlamaRMSNorm's statements (builders.h rms_norm: weight * x.to(input dtype)).
//   OlmoeAttention.forward:
//     query_states = q_norm(q_proj(x))     RMSNorm over the whole projected width [B, S, H] (k_norm over
//     key_states = k_norm(k_proj(x))       kv_heads * head_dim), *before* the head views: neither Qwen3's
//     value_states = v_proj(x)             per-head norm nor Llama's plain views
//     clip_qkv set: query_states.clamp_(-c, c), then key_states, then value_states (in place)
//     view(B, S, -1, D).transpose(1, 2) of each, apply_rotary_pos_emb (Llama's), the attention from the cache
//     update on (llama_parts.h attention_core), reshape, o_proj.
//   OlmoeSparseMoeBlock: x.view(-1, H), OlmoeTopKRouter (the statements of Qwen3MoeTopKRouter: softmax in fp32,
//   topk, optional renormalisation, cast back), OlmoeExperts through the same @use_experts_implementation
//   (grouped_mm; batched_mm in generate()'s decode steps), reshape(B, S, H): qwen_parts.h qwen3_moe_block, with
//   the experts config.intermediate_size wide (the importer puts it in moe_intermediate_size).
// Registration order per layer: self_attn q, k, v, o (biases with attention_bias), q_norm, k_norm, mlp.gate
// (the router, before the experts: OlmoeSparseMoeBlock.__init__), mlp.experts.gate_up_proj,
// mlp.experts.down_proj, input_layernorm, post_attention_layernorm.
#include "engine/arch/builders.h"

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/arch/decoders/parts/qwen_parts.h"
#include "engine/checked.h"
#include "engine/dtype.h"
#include "engine/errors.h"

namespace memplan {

namespace {

struct OlmoeLayer {
  TensorId q, k, v, o, qb, kb, vb, ob, q_norm, k_norm, in_norm, post_norm;
  FfnParams ffn;  // gate = router [E, H], up = experts.gate_up_proj [E, 2I, H], down = experts.down_proj [E, H, I]
};

OlmoeLayer layer_params(GraphBuilder& b, const TransformerSpec& s, int64_t i, bool train) {
  const std::string p = "layers." + std::to_string(i) + ".";
  const int64_t H = s.hidden_size, E = s.num_experts, I = s.moe_intermediate_size;
  OlmoeLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {H}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {s.num_kv_heads * (H / s.num_heads)}, train);
  w.ffn.gate = b.param(p + "mlp.gate.weight", {E, H}, train);
  w.ffn.up = b.param(p + "mlp.experts.gate_up_proj", {E, 2 * I, H}, train);
  w.ffn.down = b.param(p + "mlp.experts.down_proj", {E, H, I}, train);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  w.post_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  return w;
}

// q_norm(q_proj(x)) / k_norm(k_proj(x)): the projection's output is the call's argument, referenced by the
// caller's frame until the norm returns (the lifetime qwen3.cpp / olmo2.cpp matched on whole-run streams).
TensorId normed_projection(GraphBuilder& b, TensorId x, TensorId wt, TensorId bias, TensorId norm_w) {
  TensorId proj = b.linear(x, wt, bias);
  b.hold(proj);
  TensorId n = rms_norm(b, proj, norm_w);
  b.drop(proj);
  return n;
}

// OlmoeAttention.forward. `weights`: eager attention's probabilities, held (see attention_core).
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const OlmoeLayer& w, TensorId x,
                   const SkeletonContext& c, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  TensorId q = normed_projection(b, x, w.q, w.qb, w.q_norm);
  b.hold(q);  // query_states, rebound to its head view, then to the rotated tensor
  TensorId k = normed_projection(b, x, w.k, w.kb, w.k_norm);
  b.hold(k);
  TensorId vp = b.linear(x, w.v, w.vb);
  b.hold(vp);
  if (s.clip_qkv) {
    for (TensorId* t : {&q, &k, &vp}) {
      const TensorId before = *t;
      *t = clamp_qkv_inplace(b, before);
      b.hold(*t);
      b.drop(before);
    }
  }
  // q / k: the rotary backward hands contiguous [B, H, S, D] gradients to the transposed head views, which
  // ViewBackward copies back into the [B, S, H * D] layout of the norm outputs (as llama.cpp's head views).
  // v's gradient arrives in its own layout from the fused SDPA kernel, else contiguous (llama.cpp attention).
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && c.mask == kNoTensor;
  // After clamp_ the projections are aliases of the norm / projection outputs: the copies are their full size.
  const auto full_bytes = [&](TensorId t) { return checked_mul(b.numel(t), dtype_bytes(b.dtype(t))); };
  TensorId qh = b.view_copying_grad(q, {B, nh, S, hd}, full_bytes(q));
  b.hold(qh);
  TensorId kh = b.view_copying_grad(k, {B, nkv, S, hd}, full_bytes(k));
  b.hold(kh);
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd}, full_bytes(vp));
  const TensorId v_proj = v;
  b.hold(v_proj);  // value_states stays bound until the attention module returns (or the cache rebinds it)
  for (TensorId t : {q, k, vp}) b.drop(t);  // rebound to the views (which keep the storage)
  TensorId qe = rope(b, qh, c.cos, c.sin);
  b.hold(qe);  // apply_rotary_pos_emb returns both before query_states / key_states are rebound
  TensorId ke = rope(b, kh, c.cos, c.sin);
  b.hold(ke);
  b.drop(qh);
  b.drop(kh);
  TensorId out = attention_o_proj(b, s, qe, ke, v, v_proj, c.mask, 0, w.o, w.ob, weights);
  return out;
}

TensorId olmoe_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h, const SkeletonContext& c) {
  const OlmoeLayer w = layer_params(b, s, i, !layer_frozen(b.config(), i));
  TensorId n1 = rms_norm(b, h, w.in_norm);
  b.hold(n1);  // bound to hidden_states until self_attn returns
  TensorId attn_weights = kNoTensor;
  TensorId a = attention(b, s, w, n1, c, attn_weights);
  b.drop(n1);
  TensorId h1 = b.add(h, a);
  TensorId n2 = rms_norm(b, h1, w.post_norm);
  b.hold(n2);  // bound to hidden_states until the MoE block returns
  TensorId m = qwen3_moe_block(b, s, w.ffn, n2);
  b.drop(n2);
  TensorId out = b.add(h1, m);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

}  // namespace

void build_olmoe(GraphBuilder& b, const TransformerSpec& s) {
  if (s.num_experts <= 0 || s.num_experts_per_tok <= 0 || s.moe_intermediate_size <= 0)
    throw InputError("model.num_experts", std::to_string(s.num_experts),
                     "olmoe's experts need num_experts, num_experts_per_tok and their intermediate size");
  if (s.head_dim * s.num_heads != s.hidden_size)
    throw InputError("model.head_dim", std::to_string(s.head_dim),
                     "must equal hidden_size / num_heads (OlmoeAttention's q_norm is over hidden_size)");
  if (s.sliding_window > 0)
    throw InputError("model.sliding_window", std::to_string(s.sliding_window), "olmoe has no sliding window");
  SkeletonSpec k{"embed_tokens.weight", "norm", false, false, olmoe_layer};
  build_causal_lm_skeleton(b, s, k);
}

}  // namespace memplan
