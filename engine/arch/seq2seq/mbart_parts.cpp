// The pre-LN encoder-decoder layers of mbart and whisper (mbart_parts.h).
#include "engine/arch/seq2seq/mbart_parts.h"

namespace memplan {

namespace {

// One pre-LN attention block: `residual = h; h = norm(h); h, _ = attn(h); h = dropout(h); h = residual + h`.
// The normed input stays bound to hidden_states until the attention returns; the residual is the caller's.
TensorId attention_block(GraphBuilder& b, const TransformerSpec& s, const BartStyle& st, const BartAttnParams& w,
                         TensorId ln_w, TensorId ln_b, TensorId h, TensorId kv_src, int64_t heads, bool causal,
                         TensorId mask, TensorId& weights, bool permuted) {
  const TensorId x = b.layer_norm(h, ln_w, ln_b, permuted, permuted);
  b.hold(x);
  // MBartAttention / WhisperAttention: BartAttention's statements, with mbart's and whisper's own model of eager's
  // gradient copies and of a single query (BartAttnStyle), the one their rows were validated with.
  const BartAttnStyle style{st.contiguous_heads, /*view_grad_copies=*/false, /*one_query_merges=*/false};
  const TensorId a = bart_attention(b, s, w, x, kv_src, causal, mask, heads, /*cache_past=*/-1, weights, style);
  b.drop(x);
  return b.add(h, b.dropout(a, s.resid_dropout));
}

// The feed-forward block on the residual stream h: final_layer_norm, bart_ffn's statements (pre_ln), residual
// add. h (`residual`) stays bound until the layer returns: the caller holds it.
TensorId feed_forward(GraphBuilder& b, const TransformerSpec& s, const BartLayerParams& w, TensorId h,
                      bool permuted) {
  const TensorId x = b.layer_norm(h, w.ln_w, w.ln_b, permuted, permuted);
  return b.add(h, bart_ffn(b, s, x, w.fc1, w.fc1_b, w.fc2, w.fc2_b, /*pre_ln=*/true));
}

// MBartEncoderLayer / WhisperEncoderLayer's fp16 guard: `torch.clamp(h, min=-c, max=c)` with Python scalars
// when the hidden states are fp16 (pure fp16 only: under amp the residual stream is fp32). ClampBackward1 keeps
// h for its mask.
TensorId fp16_clamp(GraphBuilder& b, TensorId h) {
  if (b.dtype(h) != DType::f16) return h;
  return b.generic_one("clamp", {h}, b.shape(h), DType::f16, {0});
}

}  // namespace

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

TensorId bart_cached_decoder_layer(GraphBuilder& b, const TransformerSpec& s, const BartStyle& st,
                                   const BartLayerParams& w, int64_t i, TensorId h, TensorId enc, TensorId mask,
                                   int64_t past) {
  b.begin_layer("decoder.layers." + std::to_string(i), false);
  const int64_t heads = s.decoder_num_heads;
  const BartAttnStyle style{st.contiguous_heads, /*view_grad_copies=*/false, /*one_query_merges=*/true};
  b.hold(h);  // the decoder's loop variable and the first block's `residual` until the layer returns
  TensorId w1 = kNoTensor, w2 = kNoTensor;
  TensorId x = b.layer_norm(h, w.sa_ln_w, w.sa_ln_b);
  b.hold(x);
  TensorId a = bart_attention(b, s, w.sa, x, kNoTensor, true, mask, heads, past, w1, style);
  b.drop(x);
  const TensorId h1 = b.add(h, b.dropout(a, s.resid_dropout));
  b.hold(h1);
  x = b.layer_norm(h1, w.ca_ln_w, w.ca_ln_b);
  b.hold(x);
  a = bart_attention(b, s, w.ca, x, enc, false, kNoTensor, heads, past, w2, style);
  b.drop(x);
  if (w1 != kNoTensor) b.drop(w1);  // `_` rebound by the cross-attention's result
  const TensorId h2 = b.add(h1, b.dropout(a, s.resid_dropout));
  b.drop(h1);
  b.hold(h2);
  const TensorId ffn_in = b.layer_norm(h2, w.ln_w, w.ln_b);
  const TensorId out = b.add(h2, bart_ffn(b, s, ffn_in, w.fc1, w.fc1_b, w.fc2, w.fc2_b, /*pre_ln=*/true));
  for (TensorId t : {w2, h2, h})
    if (t != kNoTensor) b.drop(t);
  b.end_layer();
  return out;
}

}  // namespace memplan
