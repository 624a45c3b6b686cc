// What the DINOv2 and DeiT importers (import_dinov2.cpp, import_deit.cpp) read alike of a transformers image
// classifier's config: the square image and patch geometry and the classifier's labels and loss. (import_vit.cpp
// keeps its own copy of the same reads.)
#pragma once
#include <string>

#include "models/hf_config_reader.h"

namespace memplan::hf::image {

// image_size / patch_size: an int, or a [h, w] list (the patch embeddings accept any Iterable); square only.
inline int64_t square_size(const ConfigReader& r, const char* key, int64_t dflt) {
  const json* v = r.raw(key);
  if (v && v->is_array()) {
    if (v->size() != 2 || !(*v)[0].is_number_integer() || (*v)[0] != (*v)[1])
      throw InputError(r.name(key), dump_short(*v), "only a square size (an integer or two equal integers) is modelled");
    json one = json::object();
    one[key] = (*v)[0];
    return ConfigReader(one, r.name("")).positive({key}, dflt, kMaxImageSize);
  }
  return r.positive({key}, dflt, kMaxImageSize);
}

// image_size (default `image_dflt`), patch_size (`patch_dflt`), num_channels (3) into s; a patch larger than the
// image is refused (the patch Conv2d would have no output).
inline void read_geometry(const ConfigReader& r, TransformerSpec& s, int64_t image_dflt, int64_t patch_dflt) {
  s.image_size = square_size(r, "image_size", image_dflt);
  s.patch_size = square_size(r, "patch_size", patch_dflt);
  if (s.patch_size > s.image_size)
    throw InputError(r.name("patch_size"), std::to_string(s.patch_size),
                     "exceeds image_size (" + std::to_string(s.image_size) + "): the patch Conv2d has no output");
  s.num_channels = r.positive({"num_channels"}, 3);
}

// PreTrainedConfig's label count (len(id2label) when given, else num_labels, else 2) into s.image_num_labels,
// and the loss ForSequenceClassificationLoss picks: cross entropy only (`cls` names the class in messages).
inline void read_labels(const ConfigReader& r, TransformerSpec& s, const std::string& cls) {
  int64_t labels = r.positive({"num_labels"}, 2);
  if (const json* id2label = r.raw("id2label")) {
    if (!id2label->is_object() || id2label->empty())
      throw InputError(r.name("id2label"), dump_short(*id2label), "must be a non-empty object of label names");
    const auto n = static_cast<int64_t>(id2label->size());
    if (r.present("num_labels") && labels != n)
      throw InputError(r.name("num_labels"), std::to_string(labels),
                       "disagrees with id2label's " + std::to_string(n) + " labels");
    labels = n;
  }
  s.image_num_labels = labels;
  read_problem_type(r, s);
  if (s.problem_type.empty() && labels == 1)
    throw InputError(r.name("num_labels"), "1",
                     "picks the regression loss (MSELoss), which is not modelled (cross entropy needs num_labels >= 2)");
  if (!s.problem_type.empty() && s.problem_type != "single_label_classification")
    throw InputError(r.name("problem_type"), "\"" + s.problem_type + "\"",
                     "is not modelled (" + cls + " is modelled with cross entropy: single_label_classification)");
}

}  // namespace memplan::hf::image
