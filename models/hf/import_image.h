// What the ViT, DeiT and DINOv2 importers (import_vit.cpp, import_deit.cpp, import_dinov2.cpp) read alike of a
// transformers image classifier's config: the square image and patch geometry, the classifier's labels and loss,
// and (ViT and DeiT, whose configs are the same class shape) the encoder's layer keys; Swin's and Swin V2's stages.
#pragma once
#include <string>
#include <vector>

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

// A per-stage list of positive integers (hidden_sizes, depths, num_heads of the hierarchical backbones: convnext,
// swin, resnet), at most `limit` each, 1 to 16 entries; `dflt` when absent.
inline std::vector<int64_t> stage_list(const ConfigReader& r, const char* key, std::vector<int64_t> dflt, int64_t limit) {
  const json* v = r.raw(key);
  if (!v) return dflt;
  if (!v->is_array() || v->empty() || v->size() > 16)
    throw InputError(r.name(key), dump_short(*v), "must be a list of 1 to 16 positive integers");
  std::vector<int64_t> out;
  for (const auto& e : *v) {
    if (!e.is_number_integer() || e.get<int64_t>() <= 0 || e.get<int64_t>() > limit)
      throw InputError(r.name(key), dump_short(*v), "must hold positive integers of at most " + std::to_string(limit));
    out.push_back(e.get<int64_t>());
  }
  return out;
}

// hidden_sizes and depths (already in s.stage_widths / s.stage_depths) name the same stages: one entry each.
inline void check_stage_counts(const ConfigReader& r, const TransformerSpec& s) {
  if (s.stage_widths.size() != s.stage_depths.size())
    throw InputError(r.name("depths"), std::to_string(s.stage_depths.size()) + " entries",
                     "differ from the " + std::to_string(s.stage_widths.size()) + " of hidden_sizes");
}

// The blocks of all stages (the sum of depths), at most kMaxLayers; `unit` names them in the message.
inline int64_t stage_total(const ConfigReader& r, const std::vector<int64_t>& depths, const char* unit) {
  int64_t total = 0;
  for (int64_t d : depths) total += d;
  if (total > kMaxLayers)
    throw InputError(r.name("depths"), std::to_string(total) + " " + unit,
                     "exceed the limit of " + std::to_string(kMaxLayers));
  return total;
}

// A hierarchical (Swin / Swin V2) config's stages into s: embed_dim (96) doubling per stage, depths (2, 2, 6, 2),
// num_heads (3, 6, 12, 24) of the same length, each stage's MLP int(mlp_ratio (4.0) * width) wide; the last stage's
// width, heads and MLP as the spec's hidden_size / num_heads / intermediate_size. `split_fails` says in the message
// what transformers does when a stage's heads do not divide its width.
inline void read_swin_stages(const ConfigReader& r, TransformerSpec& s, const char* split_fails) {
  const int64_t embed = r.positive({"embed_dim"}, 96, kMaxDim / 4);
  s.stage_depths = stage_list(r, "depths", {2, 2, 6, 2}, kMaxLayers);
  s.swin_stage_heads = stage_list(r, "num_heads", {3, 6, 12, 24}, kMaxDim);
  if (s.swin_stage_heads.size() != s.stage_depths.size())
    throw InputError(r.name("num_heads"), std::to_string(s.swin_stage_heads.size()) + " entries",
                     "differ from the " + std::to_string(s.stage_depths.size()) + " stages of depths");
  const double ratio = r.opt_positive_number({"mlp_ratio"}).value_or(4.0);
  for (size_t i = 0; i < s.stage_depths.size(); ++i) {
    if (embed > (kMaxDim / 4) >> i)
      throw InputError(r.name("embed_dim"), std::to_string(embed),
                       "makes stage " + std::to_string(i) + " wider than the limit");
    const int64_t w = embed << i;
    s.stage_widths.push_back(w);
    const int64_t heads = s.swin_stage_heads[i];
    if (w % heads != 0)
      throw InputError(r.name("num_heads"), std::to_string(heads),
                       "does not divide stage " + std::to_string(i) + "'s width " + std::to_string(w) + " (" +
                           split_fails + ")");
    const double mlp = ratio * static_cast<double>(w);
    if (!(mlp < static_cast<double>(kMaxDim)))
      throw InputError(r.name("mlp_ratio"), std::to_string(ratio), "makes the MLP wider than the limit");
    if (static_cast<int64_t>(mlp) <= 0)
      throw InputError(r.name("mlp_ratio"), std::to_string(ratio), "leaves the MLP no hidden features");
    s.swin_stage_mlp.push_back(static_cast<int64_t>(mlp));
  }
  s.num_layers = stage_total(r, s.stage_depths, "layers");
  s.hidden_size = s.stage_widths.back();
  s.num_heads = s.num_kv_heads = s.swin_stage_heads.back();
  s.head_dim = s.hidden_size / s.num_heads;
  s.intermediate_size = s.swin_stage_mlp.back();
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

// PreTrainedConfig's label count: len(id2label) when given (a non-empty object, agreeing with num_labels when
// both are), else num_labels, else 2.
inline int64_t label_count(const ConfigReader& r) {
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
  return labels;
}

// label_count() into s.image_num_labels, and the loss ForSequenceClassificationLoss picks: cross entropy only
// (`cls` names the class in messages).
inline void read_labels(const ConfigReader& r, TransformerSpec& s, const std::string& cls) {
  const int64_t labels = label_count(r);
  s.image_num_labels = labels;
  read_problem_type(r, s);
  if (s.problem_type.empty() && labels == 1)
    throw InputError(r.name("num_labels"), "1",
                     "picks the regression loss (MSELoss), which is not modelled (cross entropy needs num_labels >= 2)");
  if (!s.problem_type.empty() && s.problem_type != "single_label_classification")
    throw InputError(r.name("problem_type"), "\"" + s.problem_type + "\"",
                     "is not modelled (" + cls + " is modelled with cross entropy: single_label_classification)");
}

// ViTConfig's and DeiTConfig's encoder keys (the same fields and defaults in both classes) into s: an encoder
// (non-causal attention, training only) of hidden_size 768, 12 layers of 12 heads, intermediate 3072, gelu, the
// two dropouts, qkv_bias True; the keys that change no allocation of the classification model are read for their
// type only. `type` names the model_type in messages.
inline void read_vit_encoder(const ConfigReader& r, TransformerSpec& s, const std::string& type) {
  s.family = TransformerSpec::Family::bert;
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
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "is not modelled (" + type + " is modelled with gelu)");
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.0);
  s.embd_dropout = s.resid_dropout;  // the embeddings' dropout uses hidden_dropout_prob too
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.0);
  s.qkv_bias = r.boolean({"qkv_bias"}, true);
  s.o_bias = s.mlp_bias = true;
  s.attention_bias = s.qkv_bias;
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"initializer_range"});
  r.positive({"encoder_stride"}, 16);  // the masked-image-modeling decoder's
  r.opt_positive({"pooler_output_size"});
  r.string({"pooler_act"}, "tanh");  // the classifiers build the model without its pooler
}

}  // namespace memplan::hf::image
