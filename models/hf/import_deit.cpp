// DeiTConfig (transformers 5.17 models/deit/configuration_deit.py) and what DeiTForImageClassification reads of it.
//
// Class defaults: hidden_size 768, num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072,
// hidden_act "gelu", hidden_dropout_prob 0.0, attention_probs_dropout_prob 0.0, image_size 224, patch_size 16,
// num_channels 3, qkv_bias True; the label count is PreTrainedConfig's (len(id2label), else num_labels, else 2).
// DeiTAttention reads getattr(config, "head_dim", hidden_size // num_attention_heads).
// The class: AutoModelForImageClassification maps deit to two classes (DeiTForImageClassification,
// DeiTForImageClassificationWithTeacher) and picks the first that config.architectures names. The builder models
// DeiTForImageClassification: architectures must name it before the teacher class (WithTeacher, two heads over
// the cls and distillation tokens and no loss, is refused naming the key, as is an absent or unmatched list).
// Keys that change no allocation of the classifier (read for their type only): layer_norm_eps, initializer_range,
// encoder_stride (the masked-image-modeling decoder), pooler_output_size / pooler_act (the classifier builds
// DeiTModel without its pooler).
// Refused, naming the key: hidden_act other than gelu, a non-square or too large patch, and the labels and losses
// import_image.h refuses.
#include "models/hf/import_image.h"

namespace memplan::hf {

namespace {
constexpr const char* kClassifier = "DeiTForImageClassification";
constexpr const char* kTeacher = "DeiTForImageClassificationWithTeacher";

// The class _get_model_class would build: the first entry of architectures that is one of deit's two.
void check_architectures(const ConfigReader& r) {
  const json* a = r.raw("architectures");
  if (!a)
    throw InputError(r.name("architectures"), "absent",
                     std::string("must name ") + kClassifier + " (deit maps to two image-classification classes)");
  if (!a->is_array()) throw InputError(r.name("architectures"), dump_short(*a), "must be a list of class names");
  for (const json& e : *a) {
    if (!e.is_string()) throw InputError(r.name("architectures"), dump_short(*a), "must be a list of class names");
    const std::string name = e.get<std::string>();
    if (name == kClassifier) return;
    if (name == kTeacher)
      throw InputError(r.name("architectures"), dump_short(*a),
                       std::string("picks ") + kTeacher + " (inference-only, two heads), which is not modelled; " +
                           kClassifier + " is");
  }
  throw InputError(r.name("architectures"), dump_short(*a), std::string("must name ") + kClassifier);
}
}  // namespace

TransformerSpec import_deit(const ConfigReader& r) {
  check_architectures(r);
  TransformerSpec s;
  image::read_vit_encoder(r, s, "deit");
  image::read_geometry(r, s, 224, 16);
  image::read_labels(r, s, kClassifier);
  s.image_extra_tokens = 1;  // the distillation token
  // The learned position table: num_patches + 2 rows (the sequence is exactly that long).
  const int64_t side = s.image_size / s.patch_size;
  s.max_position_embeddings = side * side + 2;
  return s;
}

}  // namespace memplan::hf
