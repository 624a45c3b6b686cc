// CohereLayerNorm, CohereAttention and CohereDecoderLayer (transformers 5.17 models/cohere/modeling_cohere.py) and
// their cohere2 copies (models/cohere2/modeling_cohere2.py); see cohere_parts.h.
#include "engine/arch/decoders/parts/cohere_parts.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "engine/arch/decoders/parts/llama_parts.h"
#include "engine/arch/nested_sliding_mask.h"

namespace memplan {

TensorId cohere_layer_norm(GraphBuilder& b, TensorId x, TensorId w, bool held_input) {
  const DType in_dt = b.dtype(x);
  if (held_input) b.hold(x);
  const TensorId x32 = b.to(x, DType::f32);
  if (x32 != x) b.hold(x32);  // `hidden_states` (fp32) until it is rebound to the normalised product
  const TensorId mean = b.reduce_last("mean", x32, false);
  b.hold(mean);  // locals until forward returns
  const TensorId var = b.reduce_last("mean", b.pow_scalar(b.sub(x32, mean)), false);
  b.hold(var);
  // `(x - mean) * torch.rsqrt(variance + eps)`: Python evaluates the difference first.
  const TensorId centred = b.sub(x32, mean);
  const TensorId r = b.unary("rsqrt", b.add_scalar(var), false, true, true);
  const TensorId n = b.mul(centred, r);
  if (x32 != x) b.drop(x32);
  const TensorId y = b.to(b.mul(b.to(w, DType::f32), n), in_dt);
  b.drop(mean);
  b.drop(var);
  if (held_input) b.drop(x);
  return y;
}

namespace {

// rotate_half: stack([-x2, x1], -1).flatten(-2) of the even / odd strided slices.
TensorId cohere_rotate_half(GraphBuilder& b, TensorId x) {
  Shape half = b.shape(x);
  half.back() /= 2;
  const TensorId x1 = b.split(x, 1, half)[0];  // x[..., ::2]
  const TensorId x2 = b.split(x, 1, half)[0];  // x[..., 1::2]
  const TensorId neg = b.unary("neg", x2, false, false);
  return b.cat_last("stack", {neg, x1});
}

}  // namespace

CohereLayer cohere_layer_params(GraphBuilder& b, const TransformerSpec& s, const std::string& p, bool train) {
  const int64_t H = s.hidden_size, I = s.intermediate_size, nh = s.num_heads, nkv = s.num_kv_heads, hd = s.head_dim;
  CohereLayer w;
  attention_projection_params(b, s, p, train, s.attention_bias, s.attention_bias, w);
  w.q_norm = w.k_norm = kNoTensor;
  if (s.qk_layernorm) {
    w.q_norm = b.param(p + "self_attn.q_norm.weight", {nh, hd}, train);
    w.k_norm = b.param(p + "self_attn.k_norm.weight", {nkv, hd}, train);
  }
  w.gate = b.param(p + "mlp.gate_proj.weight", {I, H}, train);
  w.up = b.param(p + "mlp.up_proj.weight", {I, H}, train);
  w.down = b.param(p + "mlp.down_proj.weight", {H, I}, train);
  w.in_norm = b.param(p + "input_layernorm.weight", {H}, train);
  return w;
}

TensorId cohere_attention(GraphBuilder& b, const TransformerSpec& s, const CohereLayer& w, TensorId x, TensorId cos,
                          TensorId sin, TensorId mask, int64_t window, bool rotary, TensorId& weights) {
  const auto& cfg = b.config();
  const bool inf = !b.training();
  const int64_t B = cfg.batch_size, S = inf ? b.pass().new_tokens : cfg.seq_len, nh = s.num_heads,
                nkv = s.num_kv_heads, hd = s.head_dim;
  TensorId q = b.view(b.linear(x, w.q, w.qb), {B, S, nh, hd});
  TensorId k = b.view(b.linear(x, w.k, w.kb), {B, S, nkv, hd});
  TensorId vp = b.linear(x, w.v, w.vb);
  if (s.qk_layernorm) {
    q = cohere_layer_norm(b, q, w.q_norm, true);
    k = cohere_layer_norm(b, k, w.k_norm, true);
  }
  const bool v_grad_in_layout = cfg.attn == AttnImpl::sdpa && mask == kNoTensor;  // as in llama.cpp attention
  // The transposed head views: the rotary backward's contiguous [B, H, S, D] gradient reaches a linear (which
  // needs it in the projection's layout: a copy) unless the q / k norm's elementwise backward takes it as it is.
  // Unrotated (cohere2's full layers), q and k get their gradients from the attention as v does.
  const bool qk_grad_in_layout = s.qk_layernorm || (!rotary && v_grad_in_layout);
  if (qk_grad_in_layout) {
    q = b.view(q, {B, nh, S, hd});
    k = b.view(k, {B, nkv, S, hd});
  } else {
    q = b.view_copying_grad(q, {B, nh, S, hd});
    k = b.view_copying_grad(k, {B, nkv, S, hd});
  }
  TensorId v = v_grad_in_layout ? b.view(vp, {B, nkv, S, hd}) : b.view_copying_grad(vp, {B, nkv, S, hd});
  const TensorId v_proj = v;
  b.hold(v_proj);
  b.hold(q);  // query_states / key_states: rebound once apply_rotary_pos_emb has returned both
  b.hold(k);
  if (!rotary) return attention_o_proj(b, s, q, k, v, v_proj, mask, window, w.o, w.ob, weights);
  // apply_rotary_pos_emb: q.float() / k.float() and both embeddings are locals until it returns.
  const DType dt = b.dtype(q);
  const TensorId q32 = b.to(q, DType::f32), k32 = b.to(k, DType::f32);
  for (TensorId t : {q32, k32})
    if (t != q && t != k) b.hold(t);
  // (x * cos) + (rotate_half(x) * sin), left to right (statements, not one expression: C++ leaves the order of
  // function arguments unspecified).
  auto rotate = [&](TensorId t) {
    const TensorId a = b.mul(t, cos);
    const TensorId c = b.mul(cohere_rotate_half(b, t), sin);
    return b.add(a, c);
  };
  const TensorId qe32 = rotate(q32);
  b.hold(qe32);
  const TensorId ke32 = rotate(k32);
  b.hold(ke32);
  TensorId qe = b.to(qe32, dt);
  b.hold(qe);
  TensorId ke = b.to(ke32, dt);
  b.hold(ke);
  for (TensorId t : {q32, k32, qe32, ke32})
    if (t != q && t != k && t != qe && t != ke) b.drop(t);
  b.drop(q);
  b.drop(k);
  return attention_o_proj(b, s, qe, ke, v, v_proj, mask, window, w.o, w.ob, weights);
}

TensorId cohere_parallel_layer(GraphBuilder& b, const TransformerSpec& s, const CohereLayer& w, TensorId h,
                               TensorId cos, TensorId sin, TensorId mask, int64_t window, bool rotary) {
  TensorId n = cohere_layer_norm(b, h, w.in_norm);
  b.hold(n);  // hidden_states: both branches' input, bound until the layer returns
  TensorId attn_weights = kNoTensor;
  TensorId a = cohere_attention(b, s, w, n, cos, sin, mask, window, rotary, attn_weights);
  b.hold(a);
  TensorId m = swiglu_mlp(b, n, w.gate, w.up, w.down);
  b.hold(m);
  TensorId out = b.add(b.add(h, a), m);
  b.drop(a);
  b.drop(m);
  b.drop(n);
  if (attn_weights != kNoTensor) b.drop(attn_weights);
  return out;
}

// causal_mask_mapping: builders.h full_and_sliding_masks (both masks always), but for the sliding SDPA mask of an
// inference pass, built as sliding_mask_in_generate.
CausalMasks cohere2_masks(GraphBuilder& b, const TransformerSpec& s, DType model_dtype) {
  if (b.training() || b.config().attn == AttnImpl::eager) return full_and_sliding_masks(b, s, true, true, model_dtype);
  CausalMasks m;
  m.full = inference_mask(b, 0, model_dtype);
  const auto& p = b.pass();
  const int64_t w = s.sliding_window, kv = std::min(p.past_len, w - 1) + p.new_tokens;
  const bool skip = (p.new_tokens == 1 || kv == p.new_tokens) && kv < w;  // as inference_sliding_mask decides
  if (!skip) m.sliding = nested_sliding_sdpa_mask(b, p.from_generate ? b.config().batch_size : 1, p.new_tokens, kv);
  for (TensorId t : {m.full, m.sliding})
    if (t != kNoTensor) b.hold(t);
  return m;
}

TensorId cohere_logit_scale(GraphBuilder& b, TensorId x) { return b.scalar_op("mul_scalar", x, false); }

}  // namespace memplan
