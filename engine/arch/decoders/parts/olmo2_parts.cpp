#include "engine/arch/decoders/parts/olmo2_parts.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/nested_sliding_mask.h"

namespace memplan {

// Python lifetimes: `variance` is a local until forward returns, and the module's input stays referenced by
// the caller's frame (the call's argument) until the call returns: `held_input` for an input nothing else
// holds (a projection's or the MLP's output; whole-run inference stream: the 16 MiB q_proj output and the
// [B, S, 1] variance are freed after the norm's output exists, not after their last reads).
TensorId olmo2_rms_norm(GraphBuilder& b, TensorId x, TensorId w, bool held_input) {
  const DType in_dt = b.dtype(x);
  if (held_input) b.hold(x);
  TensorId x32 = b.to(x, DType::f32);
  TensorId sq = b.pow_scalar(x32);
  TensorId var = b.reduce_last("mean", sq, false);
  b.hold(var);
  TensorId ve = b.add_scalar(var);
  TensorId r = b.unary("rsqrt", ve, false, true, true);
  TensorId n = b.mul(x32, r);
  b.hold(n);  // `hidden_states` stays bound until forward returns, after the product's cast
  TensorId y = b.to(b.mul(w, n), in_dt);
  b.drop(n);
  b.drop(var);
  if (held_input) b.drop(x);
  return y;
}

Olmo2Layer olmo2_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, nh = s.num_heads, nkv = s.num_kv_heads,
                hd = s.head_dim;
  Olmo2Layer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = b.param(p + "self_attn.q_norm.weight", {nh * hd}, train);
  w.k_norm = b.param(p + "self_attn.k_norm.weight", {nkv * hd}, train);
  w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.post_attn_norm = b.param(p + "post_attention_layernorm.weight", {H}, train);
  w.post_ffn_norm = b.param(p + "post_feedforward_layernorm.weight", {H}, train);
  return w;
}

TensorId olmo2_attention(GraphBuilder& b, const TransformerSpec& s, const Olmo2Layer& w, TensorId x, TensorId cos,
                         TensorId sin, TensorId mask, int64_t window, TensorId& weights, bool unbatched_eager_views) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  // query_states / key_states / value_states are bound at once and rebound to their head views; the head views
  // of the norm outputs get the rotary backward's contiguous [B, H, S, D] gradients and copy them back.
  TensorId q = b.view_copying_grad(olmo2_rms_norm(b, b.linear(x, w.q, w.qb), w.q_norm, true), {B, nh, S, hd});
  b.hold(q);
  TensorId k = b.view_copying_grad(olmo2_rms_norm(b, b.linear(x, w.k, w.kb), w.k_norm, true), {B, nkv, S, hd});
  b.hold(k);
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor;  // as in llama.cpp attention
  TensorId vp = b.linear(x, w.v, w.vb);
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd});
  const TensorId v_proj = v;
  b.hold(v_proj);
  const auto [qe, ke] = rope_cast_back(b, q, k, cos, sin);  // apply_rotary_pos_emb (fp32 cos / sin)
  if (unbatched_eager_views && cfg.attn == AttnImpl::eager && B == 1)
    return eager_attention_o_proj(b, s, qe, ke, v, v_proj, mask, window, w.o, w.ob, weights);
  return attention_o_proj(b, s, qe, ke, v, v_proj, mask, window, w.o, w.ob, weights);
}

TensorId olmo2_decoder_layer(GraphBuilder& b, const TransformerSpec& s, const Olmo2Layer& w, TensorId h,
                             TensorId inputs_embeds, TensorId cos, TensorId sin, TensorId mask, int64_t window,
                             bool unbatched_eager_views) {
  const TensorId layer_in = h;
  b.hold(layer_in);  // residual, and the model's loop variable, until the layer returns
  TensorId attn_weights = kNoTensor;
  TensorId a = olmo2_attention(b, s, w, h, cos, sin, mask, window, attn_weights, unbatched_eager_views);
  a = olmo2_rms_norm(b, a, w.post_attn_norm, true);
  TensorId h1 = b.add(h, a);
  b.hold(h1);  // residual of the MLP half
  TensorId m = olmo2_rms_norm(b, swiglu_mlp(b, h1, w.gate, w.up, w.down), w.post_ffn_norm, true);
  h = b.add(h1, m);
  b.drop(h1);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  if (layer_in != inputs_embeds) b.drop(layer_in);
  return h;
}

namespace {

// eager_mask for the sliding mask: eager_mask's sdpa_mask(allow_is_causal_skip=False) evaluates the same
// and_masks as SDPA's, so the [rows, 1, q, kv] bool is built by nested_sliding_sdpa_mask's ops, then the float
// [B, 1, q, kv] additive mask is made from it and the bool freed (whole-run f17-olmo3sw-fp32-b1s1024-eager stream:
// 1 MiB a f a a f f, then the 4 MiB float mask and the bool's free).
TensorId eager_sliding_mask(GraphBuilder& b, int64_t rows, int64_t q, int64_t kv, DType dtype) {
  const TensorId allowed = nested_sliding_sdpa_mask(b, rows, q, kv);
  return b.generic({"causal_mask", {allowed}, {{{b.config().batch_size, 1, q, kv}, dtype}}, {}, {}, {}, {}})[0];
}

}  // namespace

// Both masks always (builders.h full_and_sliding_masks's cases), with the sliding mask built by the ops above:
// eager's float mask from eager_sliding_mask, and an inference pass's SDPA mask by nested_sliding_sdpa_mask (skipped as
// inference_sliding_mask decides).
CausalMasks causal_mask_mapping(GraphBuilder& b, const TransformerSpec& s, DType model_dtype) {
  const bool eager = b.config().attn == AttnImpl::eager;
  if (b.training() && !eager) return full_and_sliding_masks(b, s, true, true, model_dtype);
  CausalMasks m;
  const int64_t w = s.sliding_window;
  if (b.training()) {
    const int64_t S = b.config().seq_len;
    m.full = eager_mask(b, 1, S, S, model_dtype);
    m.sliding = eager_sliding_mask(b, 1, S, S, model_dtype);
  } else {
    m.full = inference_mask(b, 0, model_dtype);
    const auto& p = b.pass();
    const int64_t kv = std::min(p.past_len, w - 1) + p.new_tokens, rows = p.from_generate ? b.config().batch_size : 1;
    const bool skip = (p.new_tokens == 1 || kv == p.new_tokens) && kv < w;  // as inference_sliding_mask decides
    if (eager)
      m.sliding = eager_sliding_mask(b, rows, p.new_tokens, kv, model_dtype);
    else if (!skip)
      m.sliding = nested_sliding_sdpa_mask(b, rows, p.new_tokens, kv);
  }
  for (TensorId t : {m.full, m.sliding})
    if (t != kNoTensor) b.hold(t);
  return m;
}

}  // namespace memplan
