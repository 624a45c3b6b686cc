// ConvNextConfig / ConvNextV2Config (transformers 5.17 models/convnext/configuration_convnext.py,
// models/convnextv2/configuration_convnextv2.py) and what ConvNext(V2)ForImageClassification reads of them.
//
// Class defaults (both): num_channels 3, patch_size 4, num_stages 4, hidden_sizes (96, 192, 384, 768), depths
// (3, 3, 9, 3), hidden_act "gelu", layer_norm_eps 1e-12 (the final LayerNorm's; the blocks' are 1e-6), drop_path_rate
// 0.0, image_size 224; ConvNextConfig also layer_scale_init_value 1e-6 (> 0: each ConvNextLayer owns a [C]
// layer_scale_parameter). The label count is PreTrainedConfig's (len(id2label), else num_labels, else 2).
// ConvNextEncoder builds stage i of hidden_sizes[i] channels and depths[i] layers for i < num_stages, the final
// LayerNorm is hidden_sizes[-1] wide: the three must agree in length (refused otherwise, naming num_stages or depths).
// Keys that change no allocation of the classifier (read for their type only): layer_norm_eps, initializer_range,
// out_features / out_indices (ConvNextBackbone's).
// Refused, naming the key: hidden_act other than gelu, non-square image or patch sizes, a patch larger than the
// image, an image too small for the three stride-2 downsamplers (each needs a side of 2 or more), an empty stage,
// and the labels and losses import_image.h refuses.
#include "models/hf/import_image.h"

namespace memplan::hf {

TransformerSpec import_convnext(const ConfigReader& r, const std::string& type) {
  const bool v2 = type == "convnextv2";
  const std::string cls = v2 ? "ConvNextV2ForImageClassification" : "ConvNextForImageClassification";
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder (no causal LM head); the builder is the model's own
  s.stage_widths = image::stage_list(r, "hidden_sizes", {96, 192, 384, 768}, kMaxDim / 4);
  s.stage_depths = image::stage_list(r, "depths", {3, 3, 9, 3}, kMaxLayers);
  const int64_t stages = r.positive({"num_stages"}, 4, 16);
  if (static_cast<size_t>(stages) != s.stage_depths.size())
    throw InputError(r.name("num_stages"), std::to_string(stages),
                     "differs from the " + std::to_string(s.stage_depths.size()) +
                         " entries of depths (only equal lengths are modelled)");
  image::check_stage_counts(r, s);
  s.num_layers = image::stage_total(r, s.stage_depths, "layers");
  s.hidden_size = s.stage_widths.back();
  s.num_heads = s.num_kv_heads = 1;
  s.head_dim = s.hidden_size;
  s.intermediate_size = 4 * s.stage_widths.back();
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "is not modelled (" + type + " is modelled with gelu)");
  s.drop_path_rate = r.probability({"drop_path_rate"}, 0.0);
  if (!v2) {
    const json* ls = r.raw("layer_scale_init_value");
    if (ls && !ls->is_number()) throw InputError(r.name("layer_scale_init_value"), dump_short(*ls), "must be a number");
    s.convnext_layer_scale = ls ? ls->get<double>() > 0.0 : true;
  }
  s.convnext_grn = v2;
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"initializer_range"});

  image::read_geometry(r, s, 224, 4);
  // The stem (kernel = stride = patch) and one 2x2 / 2 downsampler per later stage, each floor-dividing the side.
  int64_t side = (s.image_size - s.patch_size) / s.patch_size + 1;
  for (size_t i = 1; i < s.stage_depths.size(); ++i) {
    if (side < 2)
      throw InputError(r.name("image_size"), std::to_string(s.image_size),
                       "is too small: stage " + std::to_string(i) + "'s 2x2 stride-2 downsampler gets a side of " +
                           std::to_string(side));
    side = (side - 2) / 2 + 1;
  }
  image::read_labels(r, s, cls);
  // The spec's sequence bound: hf_image_tokens' (image_size / patch_size)^2 + 1, which the case loader puts in
  // RunConfig::seq_len (the builder reads the image, not the sequence).
  s.max_position_embeddings = hf_image_tokens(s);
  return s;
}

}  // namespace memplan::hf
