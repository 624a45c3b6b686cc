// Wav2Vec2ForCTC / Wav2Vec2ForSequenceClassification / Wav2Vec2Model (transformers 5.17
// models/wav2vec2/modeling_wav2vec2.py): the shared speech skeleton (speech_parts.h) with Wav2Vec2's encoder layers.
//
//   Wav2Vec2EncoderLayer (post-norm, do_stable_layer_norm false):
//     attn_residual = h; h, _ = attention(h); h = dropout(h); h = attn_residual + h; h = layer_norm(h);
//     h = h + feed_forward(h); h = final_layer_norm(h)
//   Wav2Vec2EncoderLayerStableLayerNorm (pre-norm):
//     attn_residual = h; h = layer_norm(h); h, _ = attention(h); h = dropout(h); h = attn_residual + h;
//     h = h + feed_forward(final_layer_norm(h))
//   Wav2Vec2Attention is BartAttention's code (q, k, v projections viewed [B, heads, T, hd], the attention
//   interface with scaling hd^-0.5, reshape, out_proj); Wav2Vec2FeedForward is BART's fc1 / act / dropout / fc2 /
//   dropout (intermediate_dense, output_dense). `_` binds eager attention's probabilities until the layer returns;
//   the layer's input stays bound (attn_residual and the encoder's loop variable) until it returns; the
//   final_layer_norm output passed to feed_forward (pre-norm) lives until feed_forward returns.
// Parameters per layer in registration order: attention (k_proj, v_proj, q_proj, out_proj), layer_norm,
// feed_forward (intermediate_dense, output_dense), final_layer_norm.
#include <string>

#include "engine/arch/audio/speech_parts.h"
#include "engine/arch/seq2seq/bart_parts.h"
#include "engine/errors.h"

namespace memplan {

void Wav2Vec2Layers::register_layer(GraphBuilder& b, const TransformerSpec& s, const std::string& p, int64_t i,
                                    bool train) {
  (void)i;
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  const BartAttnParams a = bart_attn_params(b, H, p + "attention.", train);
  LayerParams w{};
  w.k = a.k, w.kb = a.kb, w.v = a.v, w.vb = a.vb, w.q = a.q, w.qb = a.qb, w.o = a.o, w.ob = a.ob;
  std::tie(w.ln_w, w.ln_b) = speech_norm_params(b, p + "layer_norm", H, train);
  w.fc1 = b.param(p + "feed_forward.intermediate_dense.weight", {I, H}, train);
  w.fc1_b = b.param(p + "feed_forward.intermediate_dense.bias", {I}, train);
  w.fc2 = b.param(p + "feed_forward.output_dense.weight", {H, I}, train);
  w.fc2_b = b.param(p + "feed_forward.output_dense.bias", {H}, train);
  std::tie(w.fln_w, w.fln_b) = speech_norm_params(b, p + "final_layer_norm", H, train);
  layers_.push_back(w);
  names_.push_back(p.substr(0, p.size() - 1));
}

TensorId Wav2Vec2Layers::run_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h) {
  const LayerParams& w = layers_[static_cast<size_t>(i)];
  BartAttnParams a;
  a.k = w.k, a.kb = w.kb, a.v = w.v, a.vb = w.vb, a.q = w.q, a.qb = w.qb, a.o = w.o, a.ob = w.ob;
  b.begin_layer(names_[static_cast<size_t>(i)], layer_checkpointed(b.config(), i));
  b.hold(h);  // attn_residual (and the encoder's loop variable) until the layer returns
  TensorId weights = kNoTensor;
  TensorId out;
  if (!s.speech_stable_layer_norm) {
    const TensorId attn = bart_attention(b, s, a, h, kNoTensor, false, kNoTensor, s.num_heads, -1, weights);
    const TensorId sum = b.add(h, b.dropout(attn, s.resid_dropout));
    const TensorId normed = b.layer_norm(sum, w.ln_w, w.ln_b);
    b.hold(normed);  // hidden_states until final_layer_norm's statement rebinds it
    const TensorId ff = bart_ffn(b, s, normed, w.fc1, w.fc1_b, w.fc2, w.fc2_b);
    const TensorId sum2 = b.add(normed, ff);
    b.drop(normed);
    out = b.layer_norm(sum2, w.fln_w, w.fln_b);
  } else {
    const TensorId normed = b.layer_norm(h, w.ln_w, w.ln_b);
    b.hold(normed);  // hidden_states until the attention's return rebinds it
    const TensorId attn = bart_attention(b, s, a, normed, kNoTensor, false, kNoTensor, s.num_heads, -1, weights);
    b.drop(normed);
    const TensorId sum = b.add(h, b.dropout(attn, s.resid_dropout));
    b.hold(sum);
    const TensorId n2 = b.layer_norm(sum, w.fln_w, w.fln_b);
    b.hold(n2);  // feed_forward's argument until it returns
    const TensorId ff = bart_ffn(b, s, n2, w.fc1, w.fc1_b, w.fc2, w.fc2_b);
    b.drop(n2);
    out = b.add(sum, ff);
    b.drop(sum);
  }
  if (weights != kNoTensor) b.drop(weights);
  b.drop(h);
  b.end_layer();
  return out;
}

void build_wav2vec2(GraphBuilder& b, const TransformerSpec& s) {
  Wav2Vec2Layers layers;
  build_speech_encoder(b, s, SpeechFamily{"wav2vec2", true}, layers);
}

}  // namespace memplan
