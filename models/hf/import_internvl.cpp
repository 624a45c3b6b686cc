// InternVLConfig and InternVLVisionConfig (transformers 5.17 models/internvl/configuration_internvl.py): the text
// decoder from text_config, read by that model_type's own importer (import_sub_decoder, as llava's), into the
// TransformerSpec's main fields; InternVLVisionModel from vision_config into the [clip / siglip] vision_* fields
// and the [internvl] fields; the pixel shuffle and the projector into ivl_shuffle / mm_projector_act /
// mm_image_tokens (engine/arch/spec.h). Built by engine/arch/vlm/internvl.cpp.
//
// InternVLConfig defaults: text_config None -> Qwen2Config() (a dict without model_type is "qwen2"); vision_config
// None -> InternVLVisionConfig(); image_token_id 151667, image_seq_length 256, downsample_ratio 0.5,
// projector_hidden_act "gelu", vision_feature_layer -1, vision_feature_select_strategy "default",
// tie_word_embeddings true (the top-level key alone decides: the wrapper's _tied_weights_keys ties lm_head to
// model.language_model.embed_tokens when it is true; no __post_init__ copies text_config's).
// InternVLVisionConfig defaults: hidden_size 1024, 24 layers, 16 heads, attention_bias false, use_qk_norm false,
// intermediate_size 4096, hidden_act "gelu", hidden_dropout_prob / attention_dropout / projection_dropout 0,
// norm_type "layer_norm", layer_norm_eps 1e-6, image_size 448 and patch_size 14 (ints or [h, w] pairs), 3
// channels, use_mask_token false, use_absolute_position_embeddings true, layer_scale_init_value 0.1 (the lambdas
// are parameters whatever its value), use_mean_pooling true (the model's final layernorm is nn.Identity).
// Keys that change no allocation (read for their type only): layer_norm_eps, initializer_range,
// layer_scale_init_value, image_token_id, image_seq_length (the processor's).
// Refused, naming the key: a text model_type other than qwen2 / llama / mistral (InternVL3.5's qwen3 and
// gpt_oss text models are not modelled), a vision model_type other than internvl_vision, heads not dividing
// hidden_size, a non-square image or patch, a patch grid the pixel shuffle cannot halve, any dropout other than
// 0 (the published configs' value; dropout in the tower was never measured), an activation the tower or the
// projector does not model, norm_type other than layer_norm / rms_norm, vision_feature_layer other than -1 (the
// hidden-state capture of output_hidden_states is not modelled), vision_feature_select_strategy other than
// "default" (get_image_features' reshape needs the class position dropped), downsample_ratio other than 1 / k.
#include <cmath>

#include "models/hf/import_image.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

const json& object_or_empty(const ConfigReader& r, const char* key) {
  static const json kEmpty = json::object();
  const json* v = r.raw(key);
  if (!v) return kEmpty;
  if (!v->is_object()) throw InputError(r.name(key), dump_short(*v), "must be a JSON object");
  return *v;
}

// A key that must hold a number (read for its type only).
void number_only(const ConfigReader& r, const char* key) {
  const json* v = r.raw(key);
  if (v && !v->is_number()) throw InputError(r.name(key), dump_short(*v), "must be a number");
}

}  // namespace

TransformerSpec import_internvl(const ConfigReader& r) {
  // (1) The text decoder, as its own model_type's importer reads it.
  const json& tj = object_or_empty(r, "text_config");
  const ConfigReader t(tj, r.name("text_config."));
  const std::string text_type = t.string({"model_type"}, "qwen2");
  if (text_type != "qwen2" && text_type != "llama" && text_type != "mistral")
    throw InputError(t.name("model_type"), "\"" + text_type + "\"",
                     "is not modelled as an internvl text model (qwen2, llama and mistral are)");
  TransformerSpec s = import_sub_decoder(t, text_type);
  s.mm_text_type = text_type;
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);

  // (2) InternVLVisionModel.
  const json& vj = object_or_empty(r, "vision_config");
  const ConfigReader v(vj, r.name("vision_config."));
  const std::string vt = v.string({"model_type"}, "internvl_vision");
  if (vt != "internvl_vision")
    throw InputError(v.name("model_type"), "\"" + vt + "\"",
                     "is not modelled as an internvl vision tower (internvl_vision is)");
  s.vision_hidden_size = v.positive({"hidden_size"}, 1024);
  s.vision_num_layers = v.positive({"num_hidden_layers"}, 24, kMaxLayers);
  s.vision_num_heads = v.positive({"num_attention_heads"}, 16);
  if (s.vision_hidden_size % s.vision_num_heads != 0)
    throw InputError(v.name("num_attention_heads"), std::to_string(s.vision_num_heads),
                     "does not divide hidden_size (" + std::to_string(s.vision_hidden_size) +
                         "): InternVLVisionAttention raises");
  s.vision_intermediate_size = v.positive({"intermediate_size"}, 4096);
  s.vision_hidden_act = v.string({"hidden_act"}, "gelu");
  if (s.vision_hidden_act != "gelu" && s.vision_hidden_act != "gelu_pytorch_tanh" &&
      s.vision_hidden_act != "quick_gelu")
    throw InputError(v.name("hidden_act"), "\"" + s.vision_hidden_act + "\"",
                     "is not modelled (gelu, gelu_pytorch_tanh and quick_gelu are)");
  for (const char* k : {"hidden_dropout_prob", "attention_dropout", "projection_dropout"})
    if (v.probability({k}, 0.0) != 0.0)
      throw InputError(v.name(k), dump_short(*v.raw(k)),
                       "is not modelled (dropout in the InternVL tower was never measured; the published configs "
                       "set 0)");
  s.ivl_attention_bias = v.boolean({"attention_bias"}, false);
  s.ivl_qk_norm = v.boolean({"use_qk_norm"}, false);
  const std::string norm = v.string({"norm_type"}, "layer_norm");
  if (norm != "layer_norm" && norm != "rms_norm")
    throw InputError(v.name("norm_type"), "\"" + norm + "\"", "must be \"layer_norm\" or \"rms_norm\" (NORM2FN)");
  s.ivl_rms_norm = norm == "rms_norm";
  s.ivl_abs_pos = v.boolean({"use_absolute_position_embeddings"}, true);
  s.ivl_mask_token = v.boolean({"use_mask_token"}, false);
  s.ivl_final_norm = !v.boolean({"use_mean_pooling"}, true);
  s.vision_num_channels = v.positive({"num_channels"}, 3);
  s.vision_image_size = image::square_size(v, "image_size", 448);
  s.vision_patch_size = image::square_size(v, "patch_size", 14);
  if (s.vision_image_size % s.vision_patch_size != 0)
    throw InputError(v.name("patch_size"), std::to_string(s.vision_patch_size),
                     "does not divide image_size (" + std::to_string(s.vision_image_size) +
                         "): get_image_features' square reshape of the patch tokens raises");
  v.opt_positive_number({"layer_norm_eps"});
  v.opt_positive_number({"initializer_range"});
  number_only(v, "layer_scale_init_value");

  // (3) Feature selection, the pixel shuffle and the projector.
  if (const json* fl = r.raw("vision_feature_layer"); fl && !(fl->is_number_integer() && fl->get<int64_t>() == -1))
    throw InputError(r.name("vision_feature_layer"), dump_short(*fl),
                     "is not modelled (-1, the last hidden state, is: other layers go through "
                     "output_hidden_states' capture)");
  const std::string strategy = r.string({"vision_feature_select_strategy"}, "default");
  if (strategy != "default")
    throw InputError(r.name("vision_feature_select_strategy"), "\"" + strategy + "\"",
                     "is not modelled (\"default\" is: with the class position kept the square reshape raises)");
  const double ratio = r.opt_positive_number({"downsample_ratio"}).value_or(0.5);
  const std::string ratio_text = r.raw("downsample_ratio") ? dump_short(*r.raw("downsample_ratio")) : "absent (0.5)";
  const double inv = 1.0 / ratio;
  const auto k = static_cast<int64_t>(std::llround(inv));
  if (k < 1 || std::fabs(inv - static_cast<double>(k)) > 1e-9 || k > 64)
    throw InputError(r.name("downsample_ratio"), ratio_text,
                     "must be 1 / k for a whole k up to 64 (the projector's width is hidden_size * int(1 / ratio)^2)");
  const int64_t side = s.vision_image_size / s.vision_patch_size;
  if (side % k != 0)
    throw InputError(r.name("downsample_ratio"), ratio_text,
                     "does not divide the " + std::to_string(side) + " x " + std::to_string(side) +
                         " patch grid: pixel_shuffle raises");
  s.ivl_shuffle = k;
  s.mm_image_tokens = (side / k) * (side / k);
  s.mm_projector_act = r.string({"projector_hidden_act"}, "gelu");
  if (s.mm_projector_act != "gelu" && s.mm_projector_act != "gelu_pytorch_tanh" && s.mm_projector_act != "silu" &&
      s.mm_projector_act != "relu")
    throw InputError(r.name("projector_hidden_act"), "\"" + s.mm_projector_act + "\"",
                     "is not modelled (gelu, gelu_pytorch_tanh, silu and relu are)");
  s.projection_dim = s.hidden_size;  // linear_2's output: the text hidden size
  r.non_negative({"image_token_id"}, 151667);
  r.non_negative({"image_seq_length"}, 256);
  return s;
}

}  // namespace memplan::hf
