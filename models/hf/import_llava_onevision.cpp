// LlavaOnevisionConfig (transformers 5.17 models/llava_onevision/configuration_llava_onevision.py): LlavaConfig's
// keys with this class's defaults, read by import_llava (the text decoder from text_config, the tower from
// vision_config, the feature selection and the projector), plus image_grid_pinpoints (read_grid_pinpoints) and
// vision_aspect_ratio (engine/arch/vlm/llava_onevision.cpp).
//
// LlavaOnevisionConfig defaults: text_config None -> Qwen2Config() (a dict without model_type is "qwen2");
// vision_config None -> SiglipVisionConfig(hidden 1024, intermediate 4096, patch 14, image 336, 24 layers, 16
// heads) (a dict without model_type is "siglip_vision_model"); image_token_index 151646, video_token_index
// 151647, projector_hidden_act "gelu", vision_feature_select_strategy "full", vision_feature_layer -1,
// vision_aspect_ratio "anyres_max_9", image_grid_pinpoints the 36 [h, w] pairs of multiples of 384 up to 2304,
// tie_word_embeddings false (import_llava: true when text_config's is).
// Keys that change no allocation: video_token_index (no video is drawn), multimodal_projector_bias (read by
// import_llava, default true: LlavaOnevisionMultiModalProjector's linears take it).
// Refused, naming the key: a vision_aspect_ratio not of the form "anyres_max_N" (N a positive integer: the
// modeling file's int(vision_aspect_ratio.strip("anyres_max_")) raises on anything else), a tower and strategy
// whose base tile does not hold side x side features (pack_image_features raises "The number of patches is not
// consistent"), and everything import_llava / read_grid_pinpoints refuse. An absent vision_config is SiglipVisionConfig's
// defaults, whose vision_use_head (true) import_llava refuses; its 336-pixel tiles also do not divide the default
// pinpoints.
#include "models/hf/import_image.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

std::vector<int64_t> default_pinpoints() {
  std::vector<int64_t> p;
  for (int64_t h = 384; h <= 2304; h += 384)
    for (int64_t w = 384; w <= 2304; w += 384) {
      p.push_back(h);
      p.push_back(w);
    }
  return p;
}

}  // namespace

TransformerSpec import_llava_onevision(const ConfigReader& r) {
  LlavaDefaults d;
  d.text_type = "qwen2";
  d.vision_type = d.absent_vision_type = "siglip_vision_model";
  d.absent_vision = {1024, 4096, 24, 16, 336, 14};
  d.feature_layer = -1;
  d.strategy = "full";
  d.image_token = 151646;
  d.image_seq_length = -1;
  TransformerSpec s = import_llava(r, d);
  const int64_t side = s.vision_image_size / s.vision_patch_size;
  if (s.mm_image_tokens != side * side)
    throw InputError(r.name("vision_feature_select_strategy"), s.mm_feature_full ? "\"full\"" : "\"default\"",
                     "leaves " + std::to_string(s.mm_image_tokens) + " features a tile, not " +
                         std::to_string(side) + " x " + std::to_string(side) +
                         ": pack_image_features raises (siglip towers need \"full\", clip towers \"default\")");
  read_grid_pinpoints(r, s, default_pinpoints(), "absent (the default pinpoints, multiples of 384 up to 2304)");
  const std::string ar = r.string({"vision_aspect_ratio"}, "anyres_max_9");
  const std::string prefix = "anyres_max_";
  const std::string digits = ar.rfind(prefix, 0) == 0 ? ar.substr(prefix.size()) : "";
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos ||
      std::stoll(digits) <= 0)
    throw InputError(r.name("vision_aspect_ratio"), "\"" + ar.substr(0, 40) + "\"",
                     "must be \"anyres_max_N\" with N a positive integer (the base tiles an image keeps)");
  s.mm_anyres_max_patches = std::stoll(digits);
  r.non_negative({"video_token_index", "video_token_id"}, 151647);
  return s;
}

}  // namespace memplan::hf
