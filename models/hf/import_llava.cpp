// LlavaConfig (transformers 5.17 models/llava/configuration_llava.py) and the vision tower both multimodal wrappers
// of family set 23 read (llava here, paligemma in import_paligemma.cpp): the text decoder from text_config, read by
// that model_type's own importer (import_sub_decoder), into the TransformerSpec's main fields; the tower from
// vision_config into the [clip / siglip] vision_* fields; the projector and the image layout into the [llava]
// fields (engine/arch/spec.h).
//
// LlavaConfig defaults: text_config None -> LlamaConfig() (a dict without model_type is "llama"); vision_config
// None -> CLIPVisionConfig(hidden 1024, intermediate 4096, patch 14, image 336, 24 layers, 16 heads) (a dict
// without model_type is "clip_vision_model"); image_token_index 32000, projector_hidden_act "gelu",
// vision_feature_select_strategy "default", vision_feature_layer -2, multimodal_projector_bias true,
// tie_word_embeddings false (true when text_config's is: __post_init__ copies it).
// Vision class defaults. CLIPVisionConfig: hidden_size 768, intermediate_size 3072, num_hidden_layers 12,
// num_attention_heads 12, num_channels 3, image_size 224, patch_size 32, hidden_act "quick_gelu".
// SiglipVisionConfig: hidden_size 768, intermediate_size 3072, 12 layers, 12 heads, num_channels 3, image_size
// 224, patch_size 16, hidden_act "gelu_pytorch_tanh"; vision_use_head read with getattr, default true.
// Keys that change no allocation (read for their type only): layer_norm_eps, initializer_range, image_seq_length
// (the processor's), projection_dim of a CLIP tower (CLIPVisionModel has no projection).
// Refused, naming the key: a text model_type other than llama / mistral / qwen2, a vision model_type other than
// clip_vision_model / siglip_vision_model, attention_dropout other than 0, an activation the towers do not
// model, heads not dividing hidden_size, a non-square image or patch, vision_use_head true (the MAP head's pooled
// output is dropped unused: a dead branch not modelled), a vision_feature_layer outside the num_layers + 1
// hidden states, an unknown select strategy, a projector activation other than gelu / gelu_pytorch_tanh / silu /
// relu.
#include "models/hf/import_image.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// config[key] as an object (absent or null: an empty one, the class's defaults).
const json& sub_object(const ConfigReader& r, const char* key) {
  static const json kEmpty = json::object();
  const json* v = r.raw(key);
  if (!v) return kEmpty;
  if (!v->is_object()) throw InputError(r.name(key), dump_short(*v), "must be a JSON object");
  return *v;
}

}  // namespace

void read_mm_vision_tower(const ConfigReader& v, TransformerSpec& s, bool clip, const MmVisionDefaults& d) {
  s.mm_vision_clip = clip;
  s.vision_hidden_size = v.positive({"hidden_size"}, d.hidden);
  s.vision_intermediate_size = v.positive({"intermediate_size"}, d.inter);
  s.vision_num_layers = v.positive({"num_hidden_layers"}, d.layers, kMaxLayers);
  s.vision_num_heads = v.positive({"num_attention_heads"}, d.heads);
  if (s.vision_hidden_size % s.vision_num_heads != 0)
    throw InputError(v.name("num_attention_heads"), std::to_string(s.vision_num_heads),
                     "does not divide hidden_size (" + std::to_string(s.vision_hidden_size) + "): the attention raises");
  s.vision_hidden_act = v.string({"hidden_act"}, clip ? "quick_gelu" : "gelu_pytorch_tanh");
  if (s.vision_hidden_act != "quick_gelu" && s.vision_hidden_act != "gelu" && s.vision_hidden_act != "gelu_pytorch_tanh")
    throw InputError(v.name("hidden_act"), "\"" + s.vision_hidden_act + "\"",
                     "is not modelled (quick_gelu, gelu and gelu_pytorch_tanh are)");
  if (v.probability({"attention_dropout"}, 0.0) != 0.0)
    throw InputError(v.name("attention_dropout"), dump_short(*v.raw("attention_dropout")),
                     "is not modelled (attention dropout was never measured for these towers; 0 is)");
  s.vision_num_channels = v.positive({"num_channels"}, 3);
  s.vision_image_size = image::square_size(v, "image_size", d.image);
  s.vision_patch_size = image::square_size(v, "patch_size", d.patch);
  if (s.vision_patch_size > s.vision_image_size)
    throw InputError(v.name("patch_size"), std::to_string(s.vision_patch_size),
                     "exceeds image_size (" + std::to_string(s.vision_image_size) + "): the patch Conv2d has no output");
  if (!clip && v.boolean({"vision_use_head"}, true))
    throw InputError(v.name("vision_use_head"), v.raw("vision_use_head") ? "true" : "absent (getattr default true)",
                     "runs the MAP head, whose pooled output the wrapper drops unused: not modelled (the published "
                     "configs set false)");
  v.opt_positive_number({"layer_norm_eps"});
  v.opt_positive_number({"initializer_range"});
}

TransformerSpec import_llava(const ConfigReader& r) { return import_llava(r, LlavaDefaults{}); }

TransformerSpec import_llava(const ConfigReader& r, const LlavaDefaults& d) {
  // (1) The text decoder, as its own model_type's importer reads it.
  const json& tj = sub_object(r, "text_config");
  const ConfigReader t(tj, r.name("text_config."));
  const std::string text_type = t.string({"model_type"}, d.text_type);
  if (text_type != "llama" && text_type != "mistral" && text_type != "qwen2")
    throw InputError(t.name("model_type"), "\"" + text_type + "\"",
                     "is not modelled as a llava text model (llama, mistral and qwen2 are)");
  TransformerSpec s = import_sub_decoder(t, text_type);
  s.mm_text_type = text_type;
  // LlavaConfig.__post_init__: tie_word_embeddings false at the top is replaced by text_config's.
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false) || t.boolean({"tie_word_embeddings"}, false);

  // (2) The vision tower.
  const json& vj = sub_object(r, "vision_config");
  const ConfigReader v(vj, r.name("vision_config."));
  const bool defaults = r.raw("vision_config") == nullptr;
  const std::string vt = v.string({"model_type"}, defaults ? d.absent_vision_type : d.vision_type);
  if (vt != "clip_vision_model" && vt != "siglip_vision_model")
    throw InputError(v.name("model_type"), "\"" + vt + "\"",
                     "is not modelled as a llava vision tower (clip_vision_model and siglip_vision_model are)");
  const bool clip = vt == "clip_vision_model";
  if (defaults)
    read_mm_vision_tower(v, s, clip, d.absent_vision);
  else
    read_mm_vision_tower(v, s, clip, clip ? MmVisionDefaults{768, 3072, 12, 12, 224, 32}
                                          : MmVisionDefaults{768, 3072, 12, 12, 224, 16});
  if (clip) v.opt_positive({"projection_dim"});

  // (3) Feature selection and the projector.
  const int64_t n_hidden = s.vision_num_layers + 1;  // hidden_states: the embeddings' output, then each layer's
  auto layer_index = [&](const json& e, const std::string& what) {
    if (!e.is_number_integer() || e.get<int64_t>() < -n_hidden || e.get<int64_t>() >= n_hidden)
      throw InputError(r.name("vision_feature_layer"), what,
                       "must index the vision tower's " + std::to_string(n_hidden) +
                           " hidden states (num_hidden_layers + 1): hidden_states[i] raises otherwise");
    const int64_t i = e.get<int64_t>();
    return i < 0 ? i + n_hidden : i;
  };
  if (const json* fl = r.raw("vision_feature_layer")) {
    if (fl->is_array()) {
      if (fl->empty()) throw InputError(r.name("vision_feature_layer"), "[]", "must name at least one layer");
      for (const json& e : *fl) s.mm_feature_layers.push_back(layer_index(e, dump_short(*fl)));
    } else {
      s.mm_feature_layers.push_back(layer_index(*fl, dump_short(*fl)));
    }
  } else {
    s.mm_feature_layers.push_back(
        layer_index(json(d.feature_layer), std::to_string(d.feature_layer) + " (the default)"));
  }
  const std::string strategy = r.string({"vision_feature_select_strategy"}, d.strategy);
  if (strategy != "default" && strategy != "full")
    throw InputError(r.name("vision_feature_select_strategy"), "\"" + strategy + "\"",
                     "must be \"default\" (drop the first position) or \"full\"");
  s.mm_feature_full = strategy == "full";
  s.mm_projector_act = r.string({"projector_hidden_act"}, "gelu");
  if (s.mm_projector_act != "gelu" && s.mm_projector_act != "gelu_pytorch_tanh" && s.mm_projector_act != "silu" &&
      s.mm_projector_act != "relu")
    throw InputError(r.name("projector_hidden_act"), "\"" + s.mm_projector_act + "\"",
                     "is not modelled (gelu, gelu_pytorch_tanh, silu and relu are)");
  s.mm_projector_bias = r.boolean({"multimodal_projector_bias"}, true);
  s.projection_dim = s.hidden_size;  // linear_2's output: the text hidden size
  const int64_t side = s.vision_image_size / s.vision_patch_size;
  s.mm_image_tokens = side * side + (clip ? 1 : 0) - (s.mm_feature_full ? 0 : 1);
  if (s.mm_image_tokens <= 0)
    throw InputError(r.name("vision_feature_select_strategy"), "\"default\"",
                     "leaves no image token (the tower makes one position, which \"default\" drops)");
  r.non_negative({"image_token_index", "image_token_id"}, d.image_token);
  if (d.image_seq_length >= 0) r.non_negative({"image_seq_length"}, d.image_seq_length);
  return s;
}

}  // namespace memplan::hf
