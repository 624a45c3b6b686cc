// The pre-LN encoder-decoder layers of mbart and whisper (mbart_parts.h).
#include "engine/arch/mbart_parts.h"

#include <tuple>

#include "engine/arch/phi_parts.h"

namespace memplan {

namespace {

BartAttnParams attn_params(GraphBuilder& b, const std::string& p, int64_t d, bool k_bias, bool train) {
  BartAttnParams w;
  w.k = b.param(p + "k_proj.weight", {d, d}, train);
  if (k_bias) w.kb = b.param(p + "k_proj.bias", {d}, train);
  w.v = b.param(p + "v_proj.weight", {d, d}, train);
  w.vb = b.param(p + "v_proj.bias", {d}, train);
  w.q = b.param(p + "q_proj.weight", {d, d}, train);
  w.qb = b.param(p + "q_proj.bias", {d}, train);
  w.o = b.param(p + "out_proj.weight", {d, d}, train);
  w.ob = b.param(p + "out_proj.bias", {d}, train);
  return w;
}

// The attention module on the normed input x (self-attention) or over `kv_src` (cross-attention), `heads`
// heads. MBartAttention: q / k / v projections and their head views [B, H, L, D] (`.view(...).transpose(1, 2)`:
// no copy; SDPA returns each gradient in its input's layout). WhisperAttention (st.contiguous_heads): q_proj's
// output times scaling (a new tensor), each head view made contiguous (a copy; its backward reshapes the
// transposed gradient back, a copy too). Then the attention (SDPA: a fused kernel whose output's memory is
// [B, L, H, D], so the transpose(1, 2).contiguous() and the reshape that follow are views; eager: the file's
// eager_attention_forward), out_proj. query_states, key_states and value_states are bound until the module
// returns (after out_proj). `weights` receives eager attention's probabilities, returned to the layer (bound to
// `_`); kNoTensor for SDPA.
TensorId attention(GraphBuilder& b, const TransformerSpec& s, const BartStyle& st, const BartAttnParams& w, TensorId x,
                   TensorId kv_src, int64_t heads, bool causal, TensorId mask, TensorId& weights) {
  const auto& cfg = b.config();
  const Shape xs = b.shape(x);
  const int64_t B = xs[0], Lq = xs[1], d = xs[2], hd = d / heads;
  const TensorId src = kv_src != kNoTensor ? kv_src : x;
  const int64_t Lk = b.shape(src)[1];
  weights = kNoTensor;
  auto heads_of = [&](TensorId proj, int64_t L) {
    const Shape hs{B, heads, L, hd};
    return st.contiguous_heads ? b.contiguous_copy(b.view(proj, hs), hs, /*grad_copied=*/true) : b.view(proj, hs);
  };
  TensorId qp = b.linear(x, w.q, w.qb);
  if (st.contiguous_heads) qp = b.scalar_op("mul_scalar", qp, false);
  const TensorId q = heads_of(qp, Lq);
  b.hold(q);
  const TensorId k = heads_of(b.linear(src, w.k, w.kb), Lk);
  b.hold(k);
  const TensorId v = heads_of(b.linear(src, w.v, w.vb), Lk);
  b.hold(v);
  TensorId ctx;
  if (cfg.attn == AttnImpl::sdpa) {
    ctx = b.sdpa(q, k, v, s.attn_dropout, causal);
    // cuDNN (16-bit) allocates its output in q's layout (alloc_with_matching_layout): Whisper's q is a
    // contiguous [B, H, L, D], so the output is too and sdpa_attention_forward's transpose(1, 2).contiguous()
    // copies it: a new [B, L, H, D] tensor that out_proj saves, besides the output the kernel saves. Its
    // gradient passes through (CloneBackward); cuDNN >= 9.5.1 takes the transposed gradient without copying it
    // (innermost stride 1). The memory-efficient kernel (fp32) writes [B, L, H, D] memory: no copy.
    // (Whole-run amp fp16 whisper-medium-width stream: a q-sized block after each attention's, freed after
    // out_proj's backward; the checkpointed amp bf16 stream shows the same pair in its first forward.)
    if (st.contiguous_heads && b.dtype(ctx) != DType::f32) ctx = b.contiguous_copy(ctx, {B, Lq, heads, hd});
  } else {
    // eager_attention_forward: torch.matmul copies head-split views whose batch and head dims cannot merge
    // (MBart's q, k and v; Whisper's are contiguous already) and bmm saves what it multiplies; `* scaling` a new
    // tensor (also for Whisper's 1.0); + the causal float mask; softmax without a dtype (fp32 under autocast's
    // policy, else the scores' dtype); dropout; matmul with v; transpose(1, 2).contiguous().
    const bool copy = !st.contiguous_heads;
    TensorId scores = b.scalar_op("mul_scalar", b.matmul(q, k, {B, heads, Lq, Lk}, copy, copy), false);
    if (mask != kNoTensor) scores = b.add(scores, mask);
    TensorId probs = b.dropout(b.softmax_last(scores), s.attn_dropout);
    weights = probs;
    b.hold(weights);
    ctx = b.contiguous_copy(b.matmul(probs, v, {B, heads, Lq, hd}, false, copy), {B, Lq, heads, hd},
                            /*grad_copied=*/true);
  }
  const TensorId out = b.linear(b.view(ctx, {B, Lq, d}), w.o, w.ob);
  for (TensorId t : {q, k, v}) b.drop(t);
  return out;
}

// One pre-LN attention block: `residual = h; h = norm(h); h, _ = attn(h); h = dropout(h); h = residual + h`.
// The normed input stays bound to hidden_states until the attention returns; the residual is the caller's.
TensorId attention_block(GraphBuilder& b, const TransformerSpec& s, const BartStyle& st, const BartAttnParams& w,
                         TensorId ln_w, TensorId ln_b, TensorId h, TensorId kv_src, int64_t heads, bool causal,
                         TensorId mask, TensorId& weights, bool permuted) {
  const TensorId x = b.layer_norm(h, ln_w, ln_b, permuted, permuted);
  b.hold(x);
  const TensorId a = attention(b, s, st, w, x, kv_src, heads, causal, mask, weights);
  b.drop(x);
  return b.add(h, b.dropout(a, s.resid_dropout));
}

// The feed-forward block on the residual stream h: final_layer_norm (bound to hidden_states until
// activation_fn(fc1(.)) returns), the activation's output (bound until fc2 returns; activation_dropout),
// fc2, dropout, residual add. h (`residual`) stays bound until the layer returns: the caller holds it.
TensorId feed_forward(GraphBuilder& b, const TransformerSpec& s, const BartLayerParams& w, TensorId h,
                      bool permuted) {
  const TensorId x = b.layer_norm(h, w.ln_w, w.ln_b, permuted, permuted);
  b.hold(x);
  const TensorId a = b.dropout(activation(b, s.hidden_act, b.linear(x, w.fc1, w.fc1_b)), s.activation_dropout);
  b.drop(x);
  b.hold(a);
  const TensorId y = b.linear(a, w.fc2, w.fc2_b);
  b.drop(a);
  return b.add(h, b.dropout(y, s.resid_dropout));
}

// MBartEncoderLayer / WhisperEncoderLayer's fp16 guard: `torch.clamp(h, min=-c, max=c)` with Python scalars
// when the hidden states are fp16 (pure fp16 only: under amp the residual stream is fp32). ClampBackward1 keeps
// h for its mask.
TensorId fp16_clamp(GraphBuilder& b, TensorId h) {
  if (b.dtype(h) != DType::f16) return h;
  return b.generic_one("clamp", {h}, b.shape(h), DType::f16, {0});
}

}  // namespace

std::pair<TensorId, TensorId> bart_norm_params(GraphBuilder& b, const std::string& name, int64_t d, bool train) {
  const TensorId w = b.param(name + ".weight", {d}, train);
  return {w, b.param(name + ".bias", {d}, train)};
}

BartLayerParams bart_layer_params(GraphBuilder& b, const TransformerSpec& s, const BartStyle& st,
                                  const std::string& prefix, int64_t i, bool decoder, bool train) {
  const int64_t d = s.hidden_size, f = decoder ? s.decoder_intermediate_size : s.intermediate_size;
  const std::string p = prefix + "layers." + std::to_string(i) + ".";
  BartLayerParams w;
  w.sa = attn_params(b, p + "self_attn.", d, st.k_bias, train);
  std::tie(w.sa_ln_w, w.sa_ln_b) = bart_norm_params(b, p + "self_attn_layer_norm", d, train);
  if (decoder) {
    w.ca = attn_params(b, p + "encoder_attn.", d, st.k_bias, train);
    std::tie(w.ca_ln_w, w.ca_ln_b) = bart_norm_params(b, p + "encoder_attn_layer_norm", d, train);
  }
  w.fc1 = b.param(p + "fc1.weight", {f, d}, train);
  w.fc1_b = b.param(p + "fc1.bias", {f}, train);
  w.fc2 = b.param(p + "fc2.weight", {d, f}, train);
  w.fc2_b = b.param(p + "fc2.bias", {d}, train);
  std::tie(w.ln_w, w.ln_b) = bart_norm_params(b, p + "final_layer_norm", d, train);
  return w;
}

TensorId bart_encoder_layer(GraphBuilder& b, const TransformerSpec& s, const BartStyle& st, const BartLayerParams& w,
                            int64_t i, TensorId h) {
  b.begin_layer("encoder.layers." + std::to_string(i), layer_checkpointed(b.config(), i));
  const TensorId layer_in = h;
  b.hold(layer_in);  // the encoder's loop variable holds the layer input until the layer returns
  TensorId weights = kNoTensor;  // `_`: bound until the layer returns
  const TensorId h1 = attention_block(b, s, st, w.sa, w.sa_ln_w, w.sa_ln_b, h, kNoTensor, s.num_heads, false,
                                      kNoTensor, weights, st.permuted_encoder_stream);
  b.hold(h1);  // `residual` from the feed-forward block on, until the layer returns
  h = fp16_clamp(b, feed_forward(b, s, w, h1, st.permuted_encoder_stream));
  for (TensorId t : {weights, h1, layer_in})
    if (t != kNoTensor) b.drop(t);
  b.end_layer();
  return h;
}

TensorId bart_decoder_layer(GraphBuilder& b, const TransformerSpec& s, const BartStyle& st, const BartLayerParams& w,
                            int64_t i, TensorId h, TensorId enc, TensorId mask) {
  b.begin_layer("decoder.layers." + std::to_string(i), layer_checkpointed(b.config(), s.num_layers + i));
  const TensorId layer_in = h;
  b.hold(layer_in);
  TensorId w1 = kNoTensor, w2 = kNoTensor;
  const TensorId h1 = attention_block(b, s, st, w.sa, w.sa_ln_w, w.sa_ln_b, h, kNoTensor, s.decoder_num_heads,
                                      true, mask, w1, false);
  b.hold(h1);  // `residual` of the cross-attention block
  const TensorId h2 = attention_block(b, s, st, w.ca, w.ca_ln_w, w.ca_ln_b, h1, enc, s.decoder_num_heads, false,
                                      kNoTensor, w2, false);
  if (w1 != kNoTensor) b.drop(w1);  // `_` rebound by the cross-attention's result
  b.drop(h1);
  b.hold(h2);  // `residual` of the feed-forward block, until the layer returns
  h = feed_forward(b, s, w, h2, false);
  for (TensorId t : {w2, h2, layer_in})
    if (t != kNoTensor) b.drop(t);
  b.end_layer();
  return h;
}

}  // namespace memplan
