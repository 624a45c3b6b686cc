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
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {
// image_size / patch_size: an int, or a [h, w] list (ViTPatchEmbeddings accepts any Iterable); square only.
int64_t square_size(const ConfigReader& r, const char* key, int64_t dflt) {
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
}  // namespace

TransformerSpec import_vit(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder: non-causal attention, training only
  s.hidden_size = r.positive({"hidden_size"}, 768);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 12);
  s.num_kv_heads = s.num_heads;
  if (s.hidden_size < s.num_heads && !r.present("head_dim"))
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "exceeds hidden_size (" + std::to_string(s.hidden_size) + "): head_dim would be 0");
  s.head_dim = r.positive({"head_dim"}, s.hidden_size / s.num_heads);
  s.intermediate_size = r.positive({"intermediate_size"}, 3072);
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "is not modelled (vit is modelled with gelu)");
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.0);
  s.embd_dropout = s.resid_dropout;  // ViTEmbeddings.dropout uses hidden_dropout_prob too
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.0);
  s.qkv_bias = r.boolean({"qkv_bias"}, true);
  s.o_bias = s.mlp_bias = true;
  s.attention_bias = s.qkv_bias;
  // Read for their type only (no memory effect on ViTForImageClassification).
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"initializer_range"});
  r.positive({"encoder_stride"}, 16);
  r.opt_positive({"pooler_output_size"});
  r.string({"pooler_act"}, "tanh");

  s.image_size = square_size(r, "image_size", 224);
  s.patch_size = square_size(r, "patch_size", 16);
  if (s.patch_size > s.image_size)
    throw InputError(r.name("patch_size"), std::to_string(s.patch_size),
                     "exceeds image_size (" + std::to_string(s.image_size) + "): the patch Conv2d has no output");
  s.num_channels = r.positive({"num_channels"}, 3);
  // PreTrainedConfig: id2label decides the label count when present; num_labels only builds a default id2label.
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
                     "is not modelled (ViTForImageClassification is modelled with cross entropy: "
                     "single_label_classification)");
  // The learned position table: num_patches + 1 rows (the encoder's sequence is exactly that long).
  const int64_t side = s.image_size / s.patch_size;
  s.max_position_embeddings = side * side + 1;
  return s;
}

}  // namespace memplan::hf
