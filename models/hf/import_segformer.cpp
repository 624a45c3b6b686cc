// SegformerConfig (transformers 5.x models/segformer/configuration_segformer.py, the dataclass form) and what
// SegformerForImageClassification / SegformerForSemanticSegmentation read of it (builder:
// engine/arch/vision/hf_segformer.cpp).
//
// Class defaults (the MiT-b0 shape of nvidia/segformer-b0-finetuned-ade-512-512): num_channels 3,
// num_encoder_blocks 4, depths (2, 2, 2, 2), sr_ratios (8, 4, 2, 1), hidden_sizes (32, 64, 160, 256),
// patch_sizes (7, 3, 3, 3), strides (4, 2, 2, 2), num_attention_heads (1, 2, 5, 8), mlp_ratios (4, 4, 4, 4),
// hidden_act "gelu", hidden_dropout_prob 0.0, attention_probs_dropout_prob 0.0, classifier_dropout_prob 0.1,
// initializer_range 0.02, drop_path_rate 0.1, layer_norm_eps 1e-6 (the modeling file's nn.LayerNorms keep their
// own 1e-5), decoder_hidden_size 256, semantic_loss_ignore_index 255, reshape_last_stage True. The label count is
// PreTrainedConfig's (len(id2label), else num_labels, else 2). The config has no image size: the model takes any;
// memplan reads an `image_size` key when the config carries one (PreTrainedConfig keeps unknown keys as
// attributes, and the harness feeds that size) and takes 224 otherwise.
// Keys read for their type only (no allocation depends on them): initializer_range, layer_norm_eps,
// semantic_loss_ignore_index (the loss ignores that label; the random labels never hold it).
// Refused, naming the key: a per-block list whose length is not num_encoder_blocks (the modeling file indexes
// each list by block: a shorter one raises, a longer one is read in part), a width its head count does not
// divide (SegformerEfficientSelfAttention raises), hidden_act other than gelu, reshape_last_stage false (the
// decode head then reshapes the last block by the square root of its channel count: transformers' own shapes
// break), num_labels 1 (ForImageClassification's regression MSELoss, ForSemanticSegmentation's
// BCEWithLogitsLoss: neither modelled), an image too small for a block's convolutions.
#include <algorithm>
#include <cmath>

#include "models/hf/import_image.h"

namespace memplan::hf {

namespace {

// One entry per encoder block: `key`'s list (dflt when absent) must have `blocks` entries.
std::vector<int64_t> block_list(const ConfigReader& r, const char* key, std::vector<int64_t> dflt, int64_t limit,
                                int64_t blocks) {
  std::vector<int64_t> v = image::stage_list(r, key, std::move(dflt), limit);
  if (static_cast<int64_t>(v.size()) != blocks)
    throw InputError(r.name(key), std::to_string(v.size()) + " entries",
                     "must have num_encoder_blocks (" + std::to_string(blocks) + ") entries, one per encoder block");
  return v;
}

// mlp_ratios: positive numbers (the modeling file takes int(hidden_size * mlp_ratio)), one per block.
std::vector<double> ratio_list(const ConfigReader& r, int64_t blocks) {
  const json* v = r.raw("mlp_ratios");
  if (!v) return std::vector<double>(static_cast<size_t>(blocks), 4.0);
  if (!v->is_array() || static_cast<int64_t>(v->size()) != blocks)
    throw InputError(r.name("mlp_ratios"), dump_short(*v),
                     "must be a list of num_encoder_blocks (" + std::to_string(blocks) + ") positive numbers");
  std::vector<double> out;
  for (const auto& e : *v) {
    if (!e.is_number() || !(e.get<double>() > 0.0))
      throw InputError(r.name("mlp_ratios"), dump_short(*v), "must hold positive numbers");
    out.push_back(e.get<double>());
  }
  return out;
}

}  // namespace

TransformerSpec import_segformer(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder-like image model (no causal LM head); its own builder
  const int64_t blocks = r.positive({"num_encoder_blocks"}, 4, 16);
  s.stage_depths = block_list(r, "depths", {2, 2, 2, 2}, kMaxLayers, blocks);
  s.seg_sr_ratios = block_list(r, "sr_ratios", {8, 4, 2, 1}, kMaxImageSize, blocks);
  s.stage_widths = block_list(r, "hidden_sizes", {32, 64, 160, 256}, kMaxDim / 16, blocks);
  s.seg_patch_sizes = block_list(r, "patch_sizes", {7, 3, 3, 3}, kMaxImageSize, blocks);
  s.seg_strides = block_list(r, "strides", {4, 2, 2, 2}, kMaxImageSize, blocks);
  s.seg_heads = block_list(r, "num_attention_heads", {1, 2, 5, 8}, kMaxDim, blocks);
  const std::vector<double> ratios = ratio_list(r, blocks);
  for (size_t i = 0; i < s.stage_widths.size(); ++i) {
    const int64_t w = s.stage_widths[i];
    if (w % s.seg_heads[i] != 0)
      throw InputError(r.name("num_attention_heads"), std::to_string(s.seg_heads[i]),
                       "does not divide block " + std::to_string(i) + "'s hidden size " + std::to_string(w) +
                           " (SegformerEfficientSelfAttention raises)");
    const double mlp = std::floor(ratios[i] * static_cast<double>(w));
    if (!(mlp < static_cast<double>(kMaxDim)))
      throw InputError(r.name("mlp_ratios"), std::to_string(ratios[i]), "makes the Mix-FFN wider than the limit");
    if (mlp < 1.0)
      throw InputError(r.name("mlp_ratios"), std::to_string(ratios[i]), "leaves the Mix-FFN no hidden features");
    s.seg_mlp.push_back(static_cast<int64_t>(mlp));
  }
  s.num_layers = image::stage_total(r, s.stage_depths, "layers");
  s.hidden_size = s.stage_widths.back();
  s.num_heads = s.num_kv_heads = s.seg_heads.back();
  s.head_dim = s.hidden_size / s.num_heads;
  s.intermediate_size = s.seg_mlp.back();
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "is not modelled (segformer is modelled with gelu)");
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.0);
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.0);
  s.seg_classifier_dropout = r.probability({"classifier_dropout_prob"}, 0.1);
  s.drop_path_rate = r.probability({"drop_path_rate"}, 0.1);
  s.seg_decoder_hidden_size = r.positive({"decoder_hidden_size"}, 256, kMaxDim / 16);
  if (const json* v = r.raw("semantic_loss_ignore_index"); v && !v->is_number_integer())
    throw InputError(r.name("semantic_loss_ignore_index"), dump_short(*v), "must be an integer");
  if (!r.boolean({"reshape_last_stage"}, true))
    throw InputError(r.name("reshape_last_stage"), "false",
                     "is not modelled (the decode head would reshape the last block by the square root of its "
                     "channel count; true, the class default, is)");
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"initializer_range"});
  s.o_bias = s.mlp_bias = s.qkv_bias = s.attention_bias = true;

  s.image_size = image::square_size(r, "image_size", 224);
  s.num_channels = r.positive({"num_channels"}, 3);
  // Each block's overlapping embedding conv (kernel k, stride, padding k // 2) must leave a side of 1 or more,
  // and a block that reduces its keys and values (sr > 1: a kernel = stride = sr conv) a side of sr or more.
  int64_t side = s.image_size;
  for (size_t i = 0; i < s.stage_widths.size(); ++i) {
    const int64_t k = s.seg_patch_sizes[i], padded = side + 2 * (k / 2);
    side = padded < k ? 0 : (padded - k) / s.seg_strides[i] + 1;
    if (side < 1 || side < s.seg_sr_ratios[i])
      throw InputError(r.name("image_size"), std::to_string(s.image_size),
                       "is too small for encoder block " + std::to_string(i) + " (its side " +
                           std::to_string(std::max<int64_t>(side, 0)) + " is below 1 or its sr_ratio " +
                           std::to_string(s.seg_sr_ratios[i]) + ")");
  }
  s.patch_size = std::min(s.seg_strides[0], s.image_size);  // routing only (hf_image_tokens > 0)
  // The routing sequence (image_size / stride)^2 + 1 stands in for the position bound the limits check.
  const int64_t grid = s.image_size / s.patch_size;
  if (grid * grid + 1 > kMaxDim)
    throw InputError(r.name("image_size"), std::to_string(s.image_size),
                     "gives " + std::to_string(grid) + " x " + std::to_string(grid) +
                         " first-block positions, more than the limit of " + std::to_string(kMaxDim));

  // PreTrainedConfig's label count; num_labels 1 switches both heads to losses that are not modelled.
  const int64_t labels = image::label_count(r);
  if (labels == 1)
    throw InputError(r.name("num_labels"), "1",
                     "is not modelled (SegformerForSemanticSegmentation then trains BCEWithLogitsLoss over a "
                     "masked map, SegformerForImageClassification MSELoss; cross entropy needs num_labels >= 2)");
  s.image_num_labels = labels;
  read_problem_type(r, s);  // ForImageClassification's loss (the builder refuses all but cross entropy)
  s.max_position_embeddings = hf_image_tokens(s);
  return s;
}

}  // namespace memplan::hf
