// LlavaNextConfig (models/llava_next/configuration_llava_next.py): LlavaConfig's keys, read by import_llava (the text
// decoder from text_config, the tower from vision_config, the feature selection and the projector), plus
// image_grid_pinpoints, the tile grids anyres chooses from (engine/arch/vlm/llava_next.cpp).
//
// LlavaNextConfig defaults: as LlavaConfig's (import_llava.cpp), image_grid_pinpoints
// [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]] (pixels, [height, width]), image_seq_length 576.
// Keys that change no allocation: use_image_newline_parameter (the model creates image_newline whatever it says).
// Refused, naming the key: a vision tower other than clip_vision_model (pack_image_features views each tile's
// features as a side x side square: a SigLIP tower under "default" has one position too few, and no published
// llava_next checkpoint uses one), image_grid_pinpoints that are not a non-empty list of [height, width] pairs of
// positive multiples of vision_config.image_size (image_size_to_num_patches counts ceil tiles, the grid shape
// floors them: the view raises on any other), and everything import_llava refuses.
#include "engine/limits.h"
#include "models/hf/import_image.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

void read_grid_pinpoints(const ConfigReader& r, TransformerSpec& s, const std::vector<int64_t>& fallback,
                         const char* fallback_text) {
  const int64_t R = s.vision_image_size;
  const std::string key = r.name("image_grid_pinpoints");
  if (const json* pp = r.raw("image_grid_pinpoints")) {
    if (!pp->is_array() || pp->empty())
      throw InputError(key, dump_short(*pp), "must be a non-empty list of [height, width] pairs");
    for (const json& e : *pp) {
      if (!e.is_array() || e.size() != 2)
        throw InputError(key, dump_short(*pp), "must hold [height, width] pairs");
      for (const json& v : e) {
        if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() % R != 0 ||
            v.get<int64_t>() > kMaxImageSize)
          throw InputError(key, dump_short(*pp),
                           "must hold positive multiples of vision_config.image_size (" + std::to_string(R) +
                               "), at most " + std::to_string(kMaxImageSize) +
                               ": pack_image_features' view needs whole tiles");
        s.mm_grid_pinpoints.push_back(v.get<int64_t>());
      }
    }
    return;
  }
  for (int64_t v : fallback) {
    if (v % R != 0)
      throw InputError(key, fallback_text, "needs vision_config.image_size dividing every pinpoint (it is " +
                                               std::to_string(R) + ")");
    s.mm_grid_pinpoints.push_back(v);
  }
}

TransformerSpec import_llava_next(const ConfigReader& r) {
  if (const json* vj = r.raw("vision_config"); vj && vj->is_object()) {
    const ConfigReader v(*vj, r.name("vision_config."));
    const std::string vt = v.string({"model_type"}, "clip_vision_model");
    if (vt != "clip_vision_model")
      throw InputError(v.name("model_type"), "\"" + vt + "\"",
                       "is not modelled as a llava_next vision tower (clip_vision_model is: pack_image_features "
                       "needs the class position the \"default\" strategy drops)");
  }
  TransformerSpec s = import_llava(r);
  read_grid_pinpoints(r, s, {336, 672, 672, 336, 672, 672, 1008, 336, 336, 1008},
                      "absent (the default pinpoints, multiples of 336)");
  r.boolean({"use_image_newline_parameter"}, true);
  return s;
}

}  // namespace memplan::hf
