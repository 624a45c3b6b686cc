// WhisperConfig (transformers 5.17 models/whisper/configuration_whisper.py) and what
// WhisperForConditionalGeneration reads of it.
//
// Class defaults (whisper-tiny's sizes): vocab 51865, num_mel_bins 80, encoder / decoder: 4 layers, 6 heads,
// ffn 1536; d_model 384, activation "gelu", dropout / attention_dropout / activation_dropout 0, layerdrops 0,
// scale_embedding False, max_source_positions 1500, max_target_positions 448, apply_spec_augment False,
// tie_word_embeddings True. attribute_map: hidden_size -> d_model, num_attention_heads ->
// encoder_attention_heads, num_hidden_layers -> encoder_layers. The input features must hold
// 2 x max_source_positions frames (WhisperEncoder raises otherwise: the builder checks seq_len), the labels at
// most max_target_positions tokens (WhisperForConditionalGeneration raises: the builder checks target_len).
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_whisper(const ConfigReader& r) {
  TransformerSpec s;
  read_bart_stacks(r, s, {51865, 384, 4, 6, 1536, 0.0});
  s.num_mel_bins = r.positive({"num_mel_bins"}, 80);
  s.max_source_positions = r.positive({"max_source_positions"}, 1500);
  s.max_position_embeddings = r.positive({"max_target_positions"}, 448);
  // SpecAugment masks the input features in training (_mask_input_features): random masks, not modelled.
  if (r.boolean({"apply_spec_augment"}, false))
    throw InputError(r.name("apply_spec_augment"), "true", "SpecAugment's feature masking is not modelled (false only)");
  // use_weighted_layer_sum belongs to WhisperForAudioClassification, which is not modelled; read for its type.
  (void)r.boolean({"use_weighted_layer_sum"}, false);
  return s;
}

}  // namespace memplan::hf
