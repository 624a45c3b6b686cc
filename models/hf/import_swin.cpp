// SwinConfig (transformers 5.17 models/swin/configuration_swin.py) and what SwinForImageClassification reads of it.
//
// Class defaults: image_size 224, patch_size 4, num_channels 3, embed_dim 96, depths (2, 2, 6, 2), num_heads
// (3, 6, 12, 24), window_size 7, mlp_ratio 4.0, qkv_bias True, hidden_dropout_prob 0.0,
// attention_probs_dropout_prob 0.0, drop_path_rate 0.1, hidden_act "gelu", use_absolute_embeddings False,
// layer_norm_eps 1e-5, encoder_stride 32. The label count is PreTrainedConfig's (len(id2label), else num_labels,
// else 2).
// Stage i is embed_dim * 2^i wide with depths[i] SwinLayers of num_heads[i] heads (head_dim = width // heads: the
// head split's view needs it exact); its MLP is int(mlp_ratio * width) wide. The patch grid is image_size /
// patch_size a side; each patch merging halves it, rounding up ((side + 1) // 2).
// Keys that change no allocation of the classifier (read for their type only): layer_norm_eps, initializer_range,
// encoder_stride (SwinForMaskedImageModeling's decoder), out_features / out_indices (SwinBackbone's).
// Refused, naming the key: hidden_act other than gelu, attention_probs_dropout_prob > 0 (not modelled), non-square
// image or patch sizes, an image side that is not a multiple of the patch (SwinPatchEmbeddings pads the pixels:
// not modelled), num_heads of another length than depths or not dividing a stage's width, and a stage whose side is
// below window_size (SwinLayer clamps its window to the side while SwinAttention's relative position bias keeps
// window_size^2 entries: transformers raises), plus the labels and losses import_image.h refuses.
#include <cmath>

#include "models/hf/import_image.h"

namespace memplan::hf {

TransformerSpec import_swin(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder (no causal LM head); the builder is the model's own
  image::read_swin_stages(r, s, "SwinAttention's head split would not fit");
  s.swin_window_size = r.positive({"window_size"}, 7, 4096);
  s.qkv_bias = r.boolean({"qkv_bias"}, true);
  s.attention_bias = s.qkv_bias;
  s.o_bias = s.mlp_bias = true;
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.0);
  s.embd_dropout = s.resid_dropout;
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.0);
  if (s.attn_dropout > 0.0)
    throw InputError(r.name("attention_probs_dropout_prob"), std::to_string(s.attn_dropout),
                     "is not modelled for swin (0.0, the class default and the published checkpoints', is)");
  s.drop_path_rate = r.probability({"drop_path_rate"}, 0.1);
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "is not modelled (swin is modelled with gelu)");
  s.swin_absolute_embeddings = r.boolean({"use_absolute_embeddings"}, false);
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"initializer_range"});
  r.positive({"encoder_stride"}, 32);

  image::read_geometry(r, s, 224, 4);
  if (s.image_size % s.patch_size != 0)
    throw InputError(r.name("image_size"), std::to_string(s.image_size),
                     "is not a multiple of patch_size (" + std::to_string(s.patch_size) +
                         "): SwinPatchEmbeddings pads the pixels, which is not modelled");
  int64_t side = s.image_size / s.patch_size;
  for (size_t i = 0; i < s.stage_depths.size(); ++i) {
    if (side < s.swin_window_size)
      throw InputError(r.name("image_size"), std::to_string(s.image_size),
                       "leaves stage " + std::to_string(i) + " a side of " + std::to_string(side) +
                           " patches, below window_size " + std::to_string(s.swin_window_size) +
                           ": SwinLayer clamps its window while the relative position bias keeps window_size^2 "
                           "entries (transformers raises)");
    side = (side + 1) / 2;
  }
  image::read_labels(r, s, "SwinForImageClassification");
  // The spec's sequence bound: hf_image_tokens' (image_size / patch_size)^2 + 1, which the case loader puts in
  // RunConfig::seq_len (the builder reads the image, not the sequence).
  s.max_position_embeddings = hf_image_tokens(s);
  return s;
}

}  // namespace memplan::hf
