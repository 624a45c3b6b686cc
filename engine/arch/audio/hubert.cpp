// HubertForCTC / HubertForSequenceClassification / HubertModel (transformers 5.17 models/hubert/modeling_hubert.py):
// the shared speech skeleton (speech_parts.h) with Wav2Vec2's encoder layers (HubertEncoderLayer and
// HubertEncoderLayerStableLayerNorm are the same statements). What HuBERT writes differently:
//   - HubertFeatureProjection returns the projection alone; its LayerNorm only with feat_proj_layer_norm, and
//     HubertModel keeps extract_features (the transposed conv output) bound until it returns.
//   - conv_pos_batch_norm (a BatchNorm1d before the positional conv instead of weight norm) is refused by the
//     importer.
#include "engine/arch/audio/speech_parts.h"

namespace memplan {

void build_hubert(GraphBuilder& b, const TransformerSpec& s) {
  Wav2Vec2Layers layers;
  build_speech_encoder(b, s, SpeechFamily{"hubert", false}, layers);
}

}  // namespace memplan
