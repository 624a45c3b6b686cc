// ResNetConfig (transformers models/resnet/configuration_resnet.py) and what ResNetForImageClassification reads of
// it (builder: engine/arch/vision/hf_resnet.cpp). Not torchvision's ResNet (`memplan models` resnet50: a VisionSpec).
//
// Class defaults: num_channels 3, embedding_size 64, hidden_sizes (256, 512, 1024, 2048), depths (3, 4, 6, 3),
// layer_type "bottleneck", hidden_act "relu", downsample_in_first_stage False, downsample_in_bottleneck False. The
// label count is PreTrainedConfig's (len(id2label), else num_labels, else 2). The config has no image size: the
// model takes any; memplan reads an `image_size` key when the config carries one (PreTrainedConfig keeps unknown
// keys as attributes) and takes 224 otherwise.
// Refused, naming the key: hidden_act other than relu (ACT2FN's other activations are not modelled here),
// layer_type other than "bottleneck" / "basic", hidden_sizes and depths of unequal lengths, a bottleneck width not a
// multiple of 4 (reduction 4), an image too small for the stem and the stride-2 stages, the losses import_image.h
// refuses. out_features / out_indices (ResNetBackbone's) change nothing of the classifier.
#include "models/hf/import_image.h"

namespace memplan::hf {

TransformerSpec import_resnet(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder-like image model (no causal LM head); its own builder
  s.stage_widths = image::stage_list(r, "hidden_sizes", {256, 512, 1024, 2048}, kMaxDim / 4);
  s.stage_depths = image::stage_list(r, "depths", {3, 4, 6, 3}, kMaxLayers);
  image::check_stage_counts(r, s);
  s.num_layers = image::stage_total(r, s.stage_depths, "blocks");
  s.resnet_embedding_size = r.positive({"embedding_size"}, 64);
  const std::string layer_type = r.string({"layer_type"}, "bottleneck");
  if (layer_type != "bottleneck" && layer_type != "basic")
    throw InputError(r.name("layer_type"), "\"" + layer_type + "\"", "must be \"bottleneck\" or \"basic\"");
  s.resnet_bottleneck = layer_type == "bottleneck";
  if (s.resnet_bottleneck)
    for (int64_t w : s.stage_widths)
      if (w % 4 != 0)
        throw InputError(r.name("hidden_sizes"), std::to_string(w),
                         "must be a multiple of 4 for bottleneck layers (their 3x3 runs at width / 4)");
  s.hidden_act = r.string({"hidden_act"}, "relu");
  if (s.hidden_act != "relu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "is not modelled (resnet is modelled with relu)");
  s.resnet_downsample_in_first_stage = r.boolean({"downsample_in_first_stage"}, false);
  s.resnet_downsample_in_bottleneck = r.boolean({"downsample_in_bottleneck"}, false);
  s.hidden_size = s.stage_widths.back();
  s.num_heads = s.num_kv_heads = 1;
  s.head_dim = s.hidden_size;
  s.intermediate_size = s.hidden_size;
  s.image_size = image::square_size(r, "image_size", 224);
  s.num_channels = r.positive({"num_channels"}, 3);
  s.patch_size = 4;  // the stem's overall stride (routing only: the builder reads image_size)
  // The stem (7x7 / 2, pad 3; max pool 3x3 / 2, pad 1) leaves a side of 1 or more from 4 pixels on, and every
  // stride-2 block keeps it at 1 or more.
  if (s.image_size < 4)
    throw InputError(r.name("image_size"), std::to_string(s.image_size), "is too small for the stem (4 pixels at least)");
  image::read_labels(r, s, "ResNetForImageClassification");
  s.max_position_embeddings = hf_image_tokens(s);
  return s;
}

}  // namespace memplan::hf
