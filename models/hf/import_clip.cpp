// CLIPConfig / SiglipConfig / Siglip2Config (transformers 5.17 models/{clip,siglip,siglip2}/configuration_*.py): the
// text tower into the TransformerSpec's main fields, the vision tower and the heads into its [clip / siglip /
// siglip2] fields (engine/arch/spec.h).
//
// Class defaults. CLIPTextConfig: vocab_size 49408, hidden_size 512, intermediate_size 2048, num_hidden_layers 12,
// num_attention_heads 8, max_position_embeddings 77, hidden_act "quick_gelu", attention_dropout 0.0,
// eos_token_id 49407. CLIPVisionConfig: hidden_size 768, intermediate_size 3072, num_hidden_layers 12,
// num_attention_heads 12, num_channels 3, image_size 224, patch_size 32, hidden_act "quick_gelu". CLIPConfig:
// projection_dim 512 (the bias-free projections). Older checkpoints spell the sub-configs text_config_dict /
// vision_config_dict: CLIPConfig lays those over text_config / vision_config.
// SiglipTextConfig / Siglip2TextConfig: vocab_size 32000, hidden_size 768, intermediate_size 3072, 12 layers of
// 12 heads, max_position_embeddings 64, hidden_act "gelu_pytorch_tanh", projection_size None -> hidden_size (the
// text head's width). SiglipVisionConfig: hidden_size 768, intermediate_size 3072, 12 layers, 12 heads,
// num_channels 3, image_size 224, patch_size 16, gelu_pytorch_tanh; Siglip2VisionConfig: no image_size,
// num_patches 256 (the position table, a square). vision_use_head: getattr default True.
// Keys that change no allocation (read for their type only): layer_norm_eps, initializer_range,
// initializer_factor, logit_scale_init_value, pad / bos token ids.
// Refused, naming the key: attention_dropout other than 0 (not measured), an activation other than quick_gelu /
// gelu / gelu_pytorch_tanh, heads not dividing hidden_size (the attention raises), a non-square image or patch, a
// patch larger than the image, a siglip2 num_patches that is not a square, vision_use_head false (the model's
// forward cannot normalise a None pooler output).
#include <cmath>

#include "models/hf/import_image.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// config[key] overlaid with config[key + "_dict"] (CLIPConfig's legacy spelling), as one object.
json sub_config(const ConfigReader& r, const char* key) {
  json out = json::object();
  const std::string keys[] = {key, std::string(key) + "_dict"};
  for (const std::string& k : keys) {
    const json* v = r.raw(k.c_str());
    if (!v) continue;
    if (!v->is_object()) throw InputError(r.name(k), dump_short(*v), "must be a JSON object");
    for (auto it = v->begin(); it != v->end(); ++it) out[it.key()] = it.value();
  }
  return out;
}

struct TowerKeys {
  int64_t hidden, inter, layers, heads;
  std::string act;
};

TowerKeys read_tower(const ConfigReader& r, const TowerKeys& d) {
  TowerKeys t;
  t.hidden = r.positive({"hidden_size"}, d.hidden);
  t.inter = r.positive({"intermediate_size"}, d.inter);
  t.layers = r.positive({"num_hidden_layers"}, d.layers, kMaxLayers);
  t.heads = r.positive({"num_attention_heads"}, d.heads);
  if (t.hidden % t.heads != 0)
    throw InputError(r.name("num_attention_heads"), std::to_string(t.heads),
                     "does not divide hidden_size (" + std::to_string(t.hidden) + "): the attention raises");
  t.act = r.string({"hidden_act"}, d.act);
  if (t.act != "quick_gelu" && t.act != "gelu" && t.act != "gelu_pytorch_tanh")
    throw InputError(r.name("hidden_act"), "\"" + t.act + "\"",
                     "is not modelled (quick_gelu, gelu and gelu_pytorch_tanh are)");
  if (r.probability({"attention_dropout"}, 0.0) != 0.0)
    throw InputError(r.name("attention_dropout"), dump_short(*r.raw("attention_dropout")),
                     "is not modelled (attention dropout was never measured for these towers; 0 is)");
  r.opt_positive_number({"layer_norm_eps"});
  r.opt_positive_number({"initializer_range"});
  r.opt_positive_number({"initializer_factor"});
  return t;
}

}  // namespace

TransformerSpec import_clip(const ConfigReader& r, const std::string& type) {
  const bool is_clip = type == "clip", naflex = type == "siglip2";
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // two encoders; inference is one forward
  const json tj = sub_config(r, "text_config"), vj = sub_config(r, "vision_config");
  const ConfigReader t(tj, r.name("text_config.")), v(vj, r.name("vision_config."));

  const TowerKeys tk = read_tower(t, is_clip ? TowerKeys{512, 2048, 12, 8, "quick_gelu"}
                                             : TowerKeys{768, 3072, 12, 12, "gelu_pytorch_tanh"});
  s.vocab_size = t.positive({"vocab_size"}, is_clip ? 49408 : 32000);
  s.hidden_size = tk.hidden;
  s.intermediate_size = tk.inter;
  s.num_layers = tk.layers;
  s.num_heads = s.num_kv_heads = tk.heads;
  s.head_dim = tk.hidden / tk.heads;
  s.hidden_act = tk.act;
  s.max_position_embeddings = t.positive({"max_position_embeddings"}, is_clip ? 77 : 64, kMaxSeqLen);
  s.qkv_bias = s.o_bias = s.mlp_bias = s.attention_bias = true;

  const TowerKeys vk = read_tower(v, is_clip ? TowerKeys{768, 3072, 12, 12, "quick_gelu"}
                                             : TowerKeys{768, 3072, 12, 12, "gelu_pytorch_tanh"});
  s.vision_hidden_size = vk.hidden;
  s.vision_intermediate_size = vk.inter;
  s.vision_num_layers = vk.layers;
  s.vision_num_heads = vk.heads;
  s.vision_hidden_act = vk.act;
  s.vision_num_channels = v.positive({"num_channels"}, 3);
  if (naflex) {
    s.vision_patch_size = image::square_size(v, "patch_size", 16);
    s.vision_num_patches = v.positive({"num_patches"}, 256);
    const auto side = static_cast<int64_t>(std::sqrt(static_cast<double>(s.vision_num_patches)));
    if (side * side != s.vision_num_patches)
      throw InputError(v.name("num_patches"), std::to_string(s.vision_num_patches),
                       "is not a square: the position table is reshaped to int(sqrt(num_patches)) squared and raises");
  } else {
    s.vision_image_size = image::square_size(v, "image_size", 224);
    s.vision_patch_size = image::square_size(v, "patch_size", is_clip ? 32 : 16);
    if (s.vision_patch_size > s.vision_image_size)
      throw InputError(v.name("patch_size"), std::to_string(s.vision_patch_size),
                       "exceeds image_size (" + std::to_string(s.vision_image_size) + "): the patch Conv2d has no output");
  }

  if (is_clip) {
    s.projection_dim = r.positive({"projection_dim"}, 512);
    const json* eos = t.raw("eos_token_id");
    s.clip_legacy_eos = eos && eos->is_number_integer() && eos->get<int64_t>() == 2;
    r.opt_positive_number({"logit_scale_init_value"});
  } else {
    s.projection_dim = t.positive({"projection_size"}, s.hidden_size);
    s.vision_use_head = v.boolean({"vision_use_head"}, true);
    if (!s.vision_use_head)
      throw InputError(v.name("vision_use_head"), "false",
                       "leaves the vision pooler_output None, which the model's forward cannot normalise");
  }
  r.opt_positive_number({"initializer_factor"});
  return s;
}

}  // namespace memplan::hf
