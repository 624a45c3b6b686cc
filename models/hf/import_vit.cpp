// ViTConfig (transformers 5.17 models/vit/configuration_vit.py) and what ViTForImageClassification reads of it.
//
// Class defaults: hidden_size 768, num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072,
// hidden_act "gelu", hidden_dropout_prob 0.0, attention_probs_dropout_prob 0.0, image_size 224, patch_size 16,
// num_channels 3, qkv_bias True; the label count is PreTrainedConfig's: len(id2label) when id2label is given,
// else num_labels, else 2. ViTAttention reads getattr(config, "head_dim", hidden_size // num_attention_heads).
// Keys that change no allocation of the classification model (read for their type only): layer_norm_eps,
// initializer_range, encoder_stride (the masked-image-modeling decoder), pooler_output_size / pooler_act
// (ViTForImageClassification builds ViTModel without its pooler).
// Refused, naming the key: a non-integer or non-square image_size / patch_size (lists of two), a patch larger than
// the image (Conv2d raises), hidden_act other than gelu, num_labels disagreeing with id2label, and the
// problem types whose loss is not cross entropy (regression: also what num_labels == 1 picks).
#include "models/hf/import_image.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_vit(const ConfigReader& r) {
  TransformerSpec s;
  image::read_vit_encoder(r, s, "vit");
  image::read_geometry(r, s, 224, 16);
  image::read_labels(r, s, "ViTForImageClassification");
  // The learned position table: num_patches + 1 rows (the encoder's sequence is exactly that long).
  const int64_t side = s.image_size / s.patch_size;
  s.max_position_embeddings = side * side + 1;
  return s;
}

}  // namespace memplan::hf
