// Swinv2Config (transformers 5.17 models/swinv2/configuration_swinv2.py) and what Swinv2ForImageClassification reads
// of it (engine/arch/vision/hf_swinv2.cpp).
//
// Class defaults (the same fields as SwinConfig plus pretrained_window_sizes): image_size 224, patch_size 4,
// num_channels 3, embed_dim 96, depths (2, 2, 6, 2), num_heads (3, 6, 12, 24), window_size 7,
// pretrained_window_sizes (0, 0, 0, 0), mlp_ratio 4.0, qkv_bias True (query and value only: Swinv2's key has no
// bias), hidden_dropout_prob 0.0, attention_probs_dropout_prob 0.0, drop_path_rate 0.1, hidden_act "gelu",
// use_absolute_embeddings False, layer_norm_eps 1e-5, encoder_stride 32. The label count is PreTrainedConfig's.
// Stage i is embed_dim * 2^i wide with depths[i] Swinv2Layers of num_heads[i] heads; its MLP is int(mlp_ratio *
// width) wide. Each layer's window is min(window_size, grid // 2^i) at construction (the continuous position bias
// MLP makes a table for any window, so, unlike Swin, a side below window_size is fine).
// Keys that change no allocation of the classifier (read for their type only): layer_norm_eps, initializer_range,
// encoder_stride, pretrained_window_sizes (it rescales the coords table's values; a list with fewer entries than
// stages is refused: Swinv2Encoder indexes it per stage).
// Refused, naming the key: hidden_act other than gelu, attention_probs_dropout_prob > 0 (not modelled),
// use_absolute_embeddings true (Swinv2Embeddings makes a [1, num_patches + 1, C] table that does not broadcast
// against the num_patches tokens: the forward raises), non-square image or patch sizes, an image side that is not
// a multiple of the patch (not modelled), num_heads of another length than depths or not dividing a stage's width,
// plus the labels and losses import_image.h refuses.
#include "models/hf/import_image.h"

namespace memplan::hf {

TransformerSpec import_swinv2(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder (no causal LM head); the builder is the model's own
  image::read_swin_stages(r, s, "Swinv2SelfAttention raises");
  s.swin_window_size = r.positive({"window_size"}, 7, 4096);
  // pretrained_window_sizes: one non-negative integer per stage at least (absent or null: the encoder's four
  // zeros).
  if (const json* v = r.raw("pretrained_window_sizes")) {
    if (!v->is_array())
      throw InputError(r.name("pretrained_window_sizes"), dump_short(*v), "must be a list of non-negative integers");
    for (const auto& e : *v)
      if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > 4096)
        throw InputError(r.name("pretrained_window_sizes"), dump_short(*v),
                         "must hold non-negative integers of at most 4096");
    if (v->size() < s.stage_depths.size())
      throw InputError(r.name("pretrained_window_sizes"), dump_short(*v),
                       "has fewer entries than the " + std::to_string(s.stage_depths.size()) +
                           " stages (Swinv2Encoder indexes it per stage)");
  } else if (s.stage_depths.size() > 4) {
    throw InputError(r.name("pretrained_window_sizes"), "absent",
                     "defaults to four entries, fewer than the " + std::to_string(s.stage_depths.size()) +
                         " stages (Swinv2Encoder indexes it per stage)");
  }
  s.qkv_bias = r.boolean({"qkv_bias"}, true);
  s.attention_bias = s.qkv_bias;
  s.o_bias = s.mlp_bias = true;
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.0);
  s.embd_dropout = s.resid_dropout;
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.0);
  if (s.attn_dropout > 0.0)
    throw InputError(r.name("attention_probs_dropout_prob"), std::to_string(s.attn_dropout),
                     "is not modelled for swinv2 (0.0, the class default and the published checkpoints', is)");
  s.drop_path_rate = r.probability({"drop_path_rate"}, 0.1);
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "is not modelled (swinv2 is modelled with gelu)");
  if (r.boolean({"use_absolute_embeddings"}, false))
    throw InputError(r.name("use_absolute_embeddings"), "true",
                     "is not supported: Swinv2Embeddings' [1, num_patches + 1, embed_dim] table does not broadcast "
                     "against the num_patches tokens (the forward raises)");
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"initializer_range"});
  r.positive({"encoder_stride"}, 32);

  image::read_geometry(r, s, 224, 4);
  if (s.image_size % s.patch_size != 0)
    throw InputError(r.name("image_size"), std::to_string(s.image_size),
                     "is not a multiple of patch_size (" + std::to_string(s.patch_size) +
                         "): Swinv2PatchEmbeddings pads the pixels, which is not modelled");
  for (size_t i = 0; i < s.stage_depths.size(); ++i)
    if (((s.image_size / s.patch_size) >> i) == 0)
      throw InputError(r.name("image_size"), std::to_string(s.image_size),
                       "leaves stage " + std::to_string(i) + " a construction grid of 0 patches (grid // 2^" +
                           std::to_string(i) + "): its window would be empty");
  image::read_labels(r, s, "Swinv2ForImageClassification");
  // The spec's sequence bound: hf_image_tokens' (image_size / patch_size)^2 + 1, which the case loader puts in
  // RunConfig::seq_len (the builder reads the image, not the sequence).
  s.max_position_embeddings = hf_image_tokens(s);
  return s;
}

}  // namespace memplan::hf
