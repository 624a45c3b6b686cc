// The speech encoders fed raw waveforms (transformers 5.17 models/wav2vec2, hubert, wavlm): the skeleton their
// three modeling files write alike, with the encoder layer left to each family (engine/arch/audio/wav2vec2.cpp,
// hubert.cpp, wavlm.cpp).
//
//   <Type>FeatureEncoder: input_values[:, None] ([B, 1, samples]; made to require grad in training unless
//     freeze_feature_encoder() ran) -> per conv layer: Conv1d (stride, no padding) -> GroupNorm(C, C) on the
//     first layer only ("group") or transpose / LayerNorm(C) / transpose on every layer ("layer") -> GELU.
//     Each conv layer rebinds hidden_states, so the previous layer's output dies with its last use.
//   .transpose(1, 2) (a view) -> <Type>FeatureProjection: LayerNorm(C) (hubert: only with feat_proj_layer_norm)
//     on the transposed view, Linear(C, H), dropout(feat_proj_dropout). wav2vec2 / wavlm return the normed
//     features as extract_features, bound until the model returns; hubert keeps the transposed conv output bound
//     instead.
//   _mask_hidden_states (training, apply_spec_augment, mask_time_prob > 0): a [B, T] boolean mask made on the CPU
//     (numpy) and copied to the GPU, then hidden_states[mask] = masked_spec_embed.to(dtype) (index_put_ in place;
//     its backward writes the incoming gradient's copy with the masked rows zeroed).
//   <Type>Encoder (post-norm, do_stable_layer_norm false): position_embeddings = pos_conv_embed(h) (bound until
//     the encoder returns); h + position_embeddings; LayerNorm; dropout; the layers.
//   <Type>EncoderStableLayerNorm: h + position_embeddings; dropout; the (pre-norm) layers; LayerNorm.
//   pos_conv_embed: transpose(1, 2) -> the weight-normed grouped Conv1d (the parametrization recomputes
//     weight = g * v / ||v|| (dim 2) at every forward: _weight_norm_interface, fused because dim 2 is v's last)
//     -> SamePad (a slice view dropping the last frame when K is even) -> GELU -> transpose(1, 2).
//   Heads: <Type>ForCTC (dropout(final_dropout), lm_head, then with labels: ones_like(input_values, long) bound as
//     attention_mask until forward returns, the output lengths from its row sums, labels >= 0, masked_select,
//     log_softmax(dtype=float32).transpose(0, 1), native CUDA ctc_loss (cuDNN disabled by the model) with "sum"
//     or "mean" reduction); <Type>ForSequenceClassification (projector, mean over frames, classifier, cross
//     entropy); the bare <Type>Model (task feature, inference only).
#pragma once
#include <string>
#include <vector>

#include "engine/arch/builders.h"

namespace memplan {

// One family's encoder layers (the rest of the skeleton is shared).
class SpeechLayers {
 public:
  virtual ~SpeechLayers() = default;
  // Registers encoder layer i's parameters under `prefix` ("wav2vec2.encoder.layers.0."), in Module._apply order.
  virtual void register_layer(GraphBuilder& b, const TransformerSpec& s, const std::string& prefix, int64_t i,
                              bool train) = 0;
  // Runs encoder layer i on h [B, T, H] (begin_layer / end_layer inside); returns its output.
  virtual TensorId run_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h) = 0;
  // The encoder returns: the family's encoder-level locals (wavlm's position_bias) are released.
  virtual void encoder_end(GraphBuilder&) {}
};

struct SpeechFamily {
  std::string base;  // the base model's attribute in the heads: "wav2vec2", "hubert", "wavlm"
  // feature_projection returns (hidden_states, norm_hidden_states) and the model rebinds extract_features to the
  // normed features (wav2vec2, wavlm); false: extract_features stays the transposed conv output (hubert).
  bool projection_returns_norm = true;
};

// Wav2Vec2EncoderLayer / Wav2Vec2EncoderLayerStableLayerNorm (and HuBERT's copies of them): BartAttention's
// statements (bart_parts.h: k_proj, v_proj, q_proj, out_proj; sdpa or eager), dropout, the residual add, then
// post-norm: layer_norm, h + feed_forward(h), final_layer_norm; or pre-norm: layer_norm before the attention and
// h + feed_forward(final_layer_norm(h)). Defined in engine/arch/audio/wav2vec2.cpp.
class Wav2Vec2Layers : public SpeechLayers {
 public:
  void register_layer(GraphBuilder& b, const TransformerSpec& s, const std::string& prefix, int64_t i,
                      bool train) override;
  TensorId run_layer(GraphBuilder& b, const TransformerSpec& s, int64_t i, TensorId h) override;

 private:
  struct LayerParams {
    TensorId k, kb, v, vb, q, qb, o, ob, ln_w, ln_b, fc1, fc1_b, fc2, fc2_b, fln_w, fln_b;
  };
  std::vector<LayerParams> layers_;
  std::vector<std::string> names_;
};

// The whole model: parameters, the batch, the forward, the head's loss (training) or the output (inference).
void build_speech_encoder(GraphBuilder& b, const TransformerSpec& s, const SpeechFamily& fam, SpeechLayers& layers);

// nn.LayerNorm(d) parameters under `name` (weight, bias).
std::pair<TensorId, TensorId> speech_norm_params(GraphBuilder& b, const std::string& name, int64_t d, bool train);

}  // namespace memplan
