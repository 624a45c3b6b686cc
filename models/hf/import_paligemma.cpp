// PaliGemmaConfig (transformers 5.17 models/paligemma/configuration_paligemma.py): the Gemma / Gemma 2 text model
// from text_config (read by import_gemma), the SigLIP tower from vision_config (read_mm_vision_tower,
// import_llava.cpp), the one-linear projector (vision hidden -> projection_dim, with bias).
//
// PaliGemmaConfig defaults: vision_config None -> SiglipVisionConfig(intermediate 4304, hidden 1152, patch 14,
// image 224, 27 layers, 16 heads, vision_use_head false) (a dict without model_type is "siglip_vision_model",
// SiglipVisionConfig's own defaults); text_config None -> GemmaConfig(hidden 2048, 18 layers, intermediate 16384,
// 8 heads, 1 KV head, vocab_size = the top-level vocab_size 257152) (a dict without model_type is "gemma");
// image_token_index 256000, projection_dim 2048, tie_word_embeddings true. __post_init__ sets the text config's
// use_bidirectional_attention to true when None (its attention modules run non-causal; the masks PaliGemmaModel
// builds carry causality), so the key is accepted here whatever its value (no allocation depends on it).
// PaliGemmaForConditionalGeneration applies no final logit softcapping (its own lm_head, not Gemma2ForCausalLM's):
// final_logit_softcapping is read and checked by the text importer, then cleared.
// Refused, naming the key: a text model_type other than gemma / gemma2, a vision model_type other than
// siglip_vision_model, projection_dim other than the text hidden_size (masked_scatter raises), an
// image_token_index outside the text vocabulary (the input_ids clone path), and what read_mm_vision_tower refuses.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_paligemma(const ConfigReader& r) {
  static const json kEmpty = json::object();
  auto sub = [&](const char* key) -> const json& {
    const json* v = r.raw(key);
    if (!v) return kEmpty;
    if (!v->is_object()) throw InputError(r.name(key), dump_short(*v), "must be a JSON object");
    return *v;
  };
  const bool default_text = r.raw("text_config") == nullptr;
  json tj = sub("text_config");
  tj.erase("use_bidirectional_attention");  // the wrapper's to set (see above)
  if (default_text) {
    tj = {{"model_type", "gemma"}, {"hidden_size", 2048}, {"num_hidden_layers", 18}, {"intermediate_size", 16384},
          {"num_attention_heads", 8}, {"num_key_value_heads", 1}};
    tj["vocab_size"] = r.positive({"vocab_size"}, 257152);
  }
  const ConfigReader t(tj, r.name("text_config."));
  const std::string text_type = t.string({"model_type"}, "gemma");
  if (text_type != "gemma" && text_type != "gemma2")
    throw InputError(t.name("model_type"), "\"" + text_type + "\"",
                     "is not modelled as a paligemma text model (gemma and gemma2 are)");
  TransformerSpec s = import_sub_decoder(t, text_type);
  s.mm_text_type = text_type;
  s.final_logit_softcapping = 0.0;
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);

  const json& vj = sub("vision_config");
  const ConfigReader v(vj, r.name("vision_config."));
  const std::string vt = v.string({"model_type"}, "siglip_vision_model");
  if (vt != "siglip_vision_model")
    throw InputError(v.name("model_type"), "\"" + vt + "\"",
                     "is not modelled as a paligemma vision tower (siglip_vision_model is)");
  if (r.raw("vision_config") == nullptr) {
    json d = {{"vision_use_head", false}};
    read_mm_vision_tower(ConfigReader(d, r.name("vision_config.")), s, false, {1152, 4304, 27, 16, 224, 14});
  } else {
    read_mm_vision_tower(v, s, false, {768, 3072, 12, 12, 224, 16});
  }
  s.projection_dim = r.positive({"projection_dim"}, 2048);
  if (s.projection_dim != s.hidden_size)
    throw InputError(r.name("projection_dim"), std::to_string(s.projection_dim),
                     "must equal the text hidden_size (" + std::to_string(s.hidden_size) +
                         "): the image features are scattered into the text embeddings");
  s.mm_projector_bias = true;
  const int64_t side = s.vision_image_size / s.vision_patch_size;
  s.mm_image_tokens = side * side;
  const int64_t image_token = r.non_negative({"image_token_index", "image_token_id"}, 256000);
  if (image_token >= s.vocab_size)
    throw InputError(r.name("image_token_index"), std::to_string(image_token),
                     "is outside the text vocabulary (" + std::to_string(s.vocab_size) +
                         "): PaliGemmaModel then clones input_ids to zero the image tokens, which is not modelled");
  r.opt_positive({"hidden_size"});
  return s;
}

}  // namespace memplan::hf
