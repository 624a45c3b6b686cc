// WavLMForCTC / WavLMForSequenceClassification / WavLMModel (transformers 5.17 models/wavlm/modeling_wavlm.py): the
// shared speech skeleton (speech_parts.h) with WavLM's encoder layers. WavLM has no SDPA path
// (_supports_sdpa = False: eager only, default_attn) and its attention is torch's F.multi_head_attention_forward:
//
//   WavLMAttention.forward(h [B, T, E], position_bias):
//     layer 0 (the only one with rel_attn_embed): compute_bias(T, T): the bucket indices are made on the CPU
//       (torch.arange without a device) and copied to the GPU ([T, T] int64); rel_attn_embed(bucket) [T, T, heads]
//       (the parameters' dtype); permute; unsqueeze(0).repeat(B, 1, 1, 1) -> position_bias [B * heads, T, T],
//       returned and passed to every later layer (the encoder binds it until it returns).
//     gated_hidden_states = h.view(B, T, heads, hd).permute(0, 2, 1, 3); gru_rel_pos_linear on that 4-d strided
//       view (aten::linear's matmul path: the fold reshape copies it, mm, bias added in place) -> [B, heads, T, 8]
//       -> .view(..., 2, 4).sum(-1) (fp32 under autocast) -> sigmoid -> chunk(2) -> gate_a * (gate_b *
//       gru_rel_pos_const - 1.0) + 2.0 -> gate [B, heads, T, 1]; gated_position_bias = gate.view(B * heads, T, 1)
//       * position_bias [B * heads, T, T].
//     F.multi_head_attention_forward(h.transpose(0, 1), ..., in_proj_bias = cat(q_b, k_b, v_b), separate q / k / v
//       weights, need_weights=True, attn_mask = gated_position_bias): each projection on the [T, B, E] transposed
//       view (matmul path: under autocast a cast of the view, then the fold's contiguous copy; mm; add_ of the
//       bias chunk); q, k, v viewed [B * heads, T, hd]; q * hd^-0.5; baddbmm(attn_mask, q, k^T) (under autocast
//       the fp32 mask is cast to the low dtype); softmax (fp32 under autocast); dropout; bmm with v; transpose(0,
//       1).contiguous(); out_proj (addmm); the weights averaged over heads ([B, T, T], bound as the layer's `_`
//       until it returns).
//   WavLMEncoderLayer (post-norm) / WavLMEncoderLayerStableLayerNorm (pre-norm): Wav2Vec2's statements around this
//   attention.
// Parameters per layer: attention (k_proj, v_proj, q_proj, out_proj, gru_rel_pos_linear, [rel_attn_embed], then its
// own gru_rel_pos_const), layer_norm, feed_forward (intermediate_dense, output_dense), final_layer_norm.
#include <string>
#include <vector>

#include "engine/arch/audio/speech_parts.h"
#include "engine/arch/seq2seq/bart_parts.h"
#include "engine/checked.h"
#include "engine/errors.h"

namespace memplan {

namespace {

class WavLMLayers : public SpeechLayers {
 public:
  void register_layer(GraphBuilder& b, const TransformerSpec& s, const std::string& p, int64_t i, bool train) override {
    const int64_t H = s.hidden_size, I = s.intermediate_size, hd = s.head_dim, nh = s.num_heads;
    LayerParams w{};
    w.a = bart_attn_params(b, H, p + "attention.", train);
    w.gru_w = b.param(p + "attention.gru_rel_pos_linear.weight", {8, hd}, train);
    w.gru_b = b.param(p + "attention.gru_rel_pos_linear.bias", {8}, train);
    if (i == 0) w.rel_embed = b.param(p + "attention.rel_attn_embed.weight", {s.wavlm_num_buckets, nh}, train);
    w.gru_const = b.param(p + "attention.gru_rel_pos_const", {1, nh, 1, 1}, train);
    std::tie(w.ln_w, w.ln_b) = speech_norm_params(b, p + "layer_norm", H, train);
    w.fc1 = b.param(p + "feed_forward.intermediate_dense.weight", {I, H}, train);
    w.fc1_b = b.param(p + "feed_forward.intermediate_dense.bias", {I}, train);
    w.fc2 = b.param(p + "feed_forward.output_dense.weight", {H, I}, train);
    w.fc2_b = b.param(p + "feed_forward.output_dense.bias", {H}, train);
    std::tie(w.fln_w, w.fln_b) = speech_norm_params(b, p + "final_layer_norm", H, train);
    layers_.push_back(w);
    names_.push_back(p.substr(0, p.size() - 1));
  }

  TensorId run_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h) override {
    const LayerParams& w = layers_[static_cast<size_t>(i)];
    b.begin_layer(names_[static_cast<size_t>(i)], layer_checkpointed(b.config(), i));
    b.hold(h);  // attn_residual (and the encoder's loop variable) until the layer returns
    TensorId weights = kNoTensor, out;
    if (!s.speech_stable_layer_norm) {
      const TensorId attn = attention(b, s, w, h, weights);
      const TensorId sum = b.add(h, b.dropout(attn, s.resid_dropout));
      const TensorId normed = b.layer_norm(sum, w.ln_w, w.ln_b);
      b.hold(normed);
      const TensorId ff = bart_ffn(b, s, normed, w.fc1, w.fc1_b, w.fc2, w.fc2_b);
      const TensorId sum2 = b.add(normed, ff);
      b.drop(normed);
      out = b.layer_norm(sum2, w.fln_w, w.fln_b);
    } else {
      const TensorId normed = b.layer_norm(h, w.ln_w, w.ln_b);
      b.hold(normed);
      const TensorId attn = attention(b, s, w, normed, weights);
      b.drop(normed);
      const TensorId sum = b.add(h, b.dropout(attn, s.resid_dropout));
      b.hold(sum);
      const TensorId n2 = b.layer_norm(sum, w.fln_w, w.fln_b);
      b.hold(n2);
      const TensorId ff = bart_ffn(b, s, n2, w.fc1, w.fc1_b, w.fc2, w.fc2_b);
      b.drop(n2);
      out = b.add(sum, ff);
      b.drop(sum);
    }
    b.drop(weights);
    b.drop(h);
    b.end_layer();
    return out;
  }

  void encoder_end(GraphBuilder& b) override {
    if (position_bias_ != kNoTensor) b.drop(position_bias_);
  }

 private:
  struct LayerParams {
    BartAttnParams a;
    TensorId gru_w, gru_b, rel_embed = kNoTensor, gru_const, ln_w, ln_b, fc1, fc1_b, fc2, fc2_b, fln_w, fln_b;
  };

  // aten::linear of a non-contiguous input of more than two dims: matmul folds it with a reshape (a contiguous
  // copy, after autocast's cast of the strided view), mm, then the bias added in place.
  // Under autocast the weight's cast comes first (cached), then the input's, which the autocast wrapper keeps
  // until the op returns (whole-run amp fp16 stream: weight, input cast, fold copy, mm output, then the cast freed).
  static TensorId strided_linear(GraphBuilder& b, TensorId x, int64_t rows, TensorId wt, TensorId bias) {
    const int64_t in = b.shape(x).back();
    b.autocast_low(wt);
    const TensorId xc = b.autocast_low(x);
    if (xc != x) b.hold(xc);
    const TensorId out = b.linear(b.contiguous_copy(xc, {rows, in}), wt, bias);
    if (xc != x) b.drop(xc);
    return out;
  }

  // WavLMAttention.forward; `weights` receives the head-averaged attention weights (held).
  TensorId attention(GraphBuilder& b, const TransformerSpec& s, const LayerParams& w, TensorId h, TensorId& weights) {
    const auto& cfg = b.config();
    const int64_t B = cfg.batch_size, T = b.shape(h)[1], E = s.hidden_size, nh = s.num_heads, hd = s.head_dim;
    const int64_t BH = checked_mul(B, nh);
    if (position_bias_ == kNoTensor) {
      if (w.rel_embed == kNoTensor)
        throw InputError("config.num_hidden_layers", "0", "wavlm's first layer computes the position bias");
      const TensorId bucket = b.generic_one("bucket_to_device", {}, {T, T}, DType::i64);
      const TensorId values = b.embedding(bucket, w.rel_embed);  // [T, T, heads]
      position_bias_ = b.generic_one("repeat", {values}, {BH, T, T}, b.dtype(values));
      b.hold(position_bias_);  // returned by every layer, bound by the encoder until it returns
    }
    // The gate from the projected head slices of h.
    TensorId rp = strided_linear(b, b.view(h, {B, nh, T, hd}), checked_mul(BH, T), w.gru_w, w.gru_b);
    const TensorId rp32 = b.autocast_fp32(rp);
    const TensorId summed = b.generic_one("sum", {rp32}, {B, nh, T, 2}, b.dtype(rp32));
    const TensorId sig = b.unary("sigmoid", summed, false, true);
    const auto gates = b.split(sig, 2, {B, nh, T, 1});
    const TensorId t = b.scalar_op("sub_scalar", b.mul(gates[1], w.gru_const), false);
    const TensorId gate = b.add_scalar(b.mul(gates[0], t));
    const TensorId gated_bias = b.mul(b.view(gate, {BH, T, 1}), position_bias_);
    b.hold(gated_bias);  // gated_position_bias: bound until the attention returns

    // F.multi_head_attention_forward
    const TensorId qkv_in = b.view(h, {T, B, E});  // hidden_states.transpose(0, 1)
    const TensorId in_bias = b.cat("cat", {w.a.qb, w.a.kb, w.a.vb}, 0);
    const auto biases = b.split(in_bias, 3, {E});
    const int64_t rows = checked_mul(T, B);
    const TensorId q = b.view(strided_linear(b, qkv_in, rows, w.a.q, biases[0]), {BH, T, hd});
    b.hold(q);
    const TensorId k = b.view(strided_linear(b, qkv_in, rows, w.a.k, biases[1]), {BH, T, hd});
    b.hold(k);
    const TensorId v = b.view(strided_linear(b, qkv_in, rows, w.a.v, biases[2]), {BH, T, hd});
    b.hold(v);
    const TensorId q_scaled = b.scalar_op("mul_scalar", q, false);
    // baddbmm(attn_mask, q_scaled, k^T): one [BH, T, T] output (lower precision under autocast, the mask cast)
    const TensorId mask_c = b.autocast_low(gated_bias);
    const TensorId qc = b.autocast_low(q_scaled), kc = b.autocast_low(k);
    const TensorId scores = b.generic({"baddbmm", {mask_c, qc, kc}, {{{BH, T, T}, b.dtype(qc)}}, {1, 2}, {}, {}, {}})[0];
    TensorId probs = b.dropout(b.softmax_last(scores), s.attn_dropout);
    b.hold(probs);  // attn_output_weights until the function returns
    const TensorId pc = b.autocast_low(probs), vc = b.autocast_low(v);
    const TensorId ctx = b.generic({"bmm", {pc, vc}, {{{BH, T, hd}, b.dtype(pc)}}, {0, 1}, {}, {}, {}})[0];
    const TensorId ctx_c = b.contiguous_copy(ctx, {rows, E});  // transpose(0, 1).contiguous().view(T * B, E)
    const TensorId out = b.linear(ctx_c, w.a.o, w.a.ob);
    // attn_output_weights.view(B, heads, T, T).mean(dim=1): returned, bound as the layer's `_`
    weights = b.generic_one("mean", {probs}, {B, T, T}, b.dtype(probs));
    b.hold(weights);
    for (TensorId x : {q, k, v, probs, gated_bias}) b.drop(x);
    return b.view(out, {B, T, E});  // attn_output.transpose(0, 1)
  }

  std::vector<LayerParams> layers_;
  std::vector<std::string> names_;
  TensorId position_bias_ = kNoTensor;
};

}  // namespace

void build_wavlm(GraphBuilder& b, const TransformerSpec& s) {
  if (b.config().attn != AttnImpl::eager)
    throw InputError("attn", std::string(attn_name(b.config().attn)),
                     "wavlm has no sdpa path (_supports_sdpa = False): its attention is torch's "
                     "multi_head_attention_forward; use eager");
  WavLMLayers layers;
  build_speech_encoder(b, s, SpeechFamily{"wavlm", true}, layers);
}

}  // namespace memplan
