// Idefics3Config / SmolVLMConfig (transformers 5.17 models/idefics3/configuration_idefics3.py,
// models/smolvlm/configuration_smolvlm.py: the same fields and defaults) and what the modeling files read of them.
//
// Stages: (1) the text model from text_config (AutoModel of its model_type, "llama" when absent: LlamaModel; no
// text_config at all: LlamaConfig(rms_norm_eps=1e-5, pad_token_id=config.pad_token_id)); (2) the vision transformer
// from vision_config; (3) the connector's scale_factor; (4) refusals naming the key for what the builders
// (engine/arch/vlm/idefics3.cpp, smolvlm.cpp) do not model.
//
// Class defaults. Idefics3VisionConfig / SmolVLMVisionConfig: hidden_size 1152, intermediate_size 3072,
// num_hidden_layers 12, num_attention_heads 16, num_channels 3, image_size 224, patch_size 32, hidden_act
// "gelu_pytorch_tanh", layer_norm_eps 1e-6, attention_dropout 0.0. Idefics3Config / SmolVLMConfig: image_token_id
// 128257, tie_word_embeddings false (read at the top level only: the text model is a bare LlamaModel, lm_head
// belongs to the outer class), scale_factor 2, pad_token_id 128002. LlamaConfig: vocab_size 32000, hidden_size
// 4096, intermediate_size 11008, num_hidden_layers 32, num_attention_heads 32, num_key_value_heads None (= heads),
// head_dim None (= hidden // heads), max_position_embeddings 2048, hidden_act "silu", attention_bias false,
// mlp_bias false, attention_dropout 0.0.
// Keys that change no allocation (read for their type only where read at all): layer_norm_eps, rms_norm_eps,
// initializer_range, rope parameters, image_token_id (the ids the plugin lays out), use_cache.
// Refused, naming the key: a text model other than llama; an activation other than silu in the text MLP or
// gelu_pytorch_tanh / gelu / quick_gelu in the vision MLP; heads not dividing the widths; a non-integer (tuple)
// image_size or patch_size; a patch larger than the image; attention_dropout other than 0 in the vision tower (not measured); a
// pad_token_id outside the text vocabulary (nn.Embedding's padding_idx raises at construction).
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

void read_text(const ConfigReader& t, TransformerSpec& s) {
  s = read_decoder_sizes(t, {32000, 4096, 11008, 32, 32, 0});
  s.family = TransformerSpec::Family::llama;
  s.max_position_embeddings = t.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = t.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu")
    throw InputError(t.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "is not modelled for the Llama text model of idefics3 / smolvlm (silu is)");
  s.attn_dropout = t.probability({"attention_dropout"}, 0.0);
  s.attention_bias = t.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.mlp_bias = t.boolean({"mlp_bias"}, false);
  if (s.head_dim % 2 != 0)
    throw InputError(t.name("head_dim"), std::to_string(s.head_dim), "must be even: rotate_half pairs dimensions");
}

void read_vision(const ConfigReader& v, TransformerSpec& s) {
  s.id3_vision_hidden = v.positive({"hidden_size"}, 1152);
  s.id3_vision_mlp = v.positive({"intermediate_size"}, 3072);
  s.id3_vision_layers = v.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.id3_vision_heads = v.positive({"num_attention_heads"}, 16);
  if (s.id3_vision_hidden % s.id3_vision_heads != 0)
    throw InputError(v.name("num_attention_heads"), std::to_string(s.id3_vision_heads),
                     "does not divide hidden_size (" + std::to_string(s.id3_vision_hidden) +
                         "): the vision attention raises");
  s.id3_vision_act = v.string({"hidden_act"}, "gelu_pytorch_tanh");
  if (s.id3_vision_act != "gelu_pytorch_tanh" && s.id3_vision_act != "gelu" && s.id3_vision_act != "quick_gelu")
    throw InputError(v.name("hidden_act"), "\"" + s.id3_vision_act + "\"",
                     "is not modelled for the vision MLP (gelu_pytorch_tanh, gelu or quick_gelu is)");
  if (v.probability({"attention_dropout"}, 0.0) != 0.0)
    throw InputError(v.name("attention_dropout"), dump_short(*v.raw("attention_dropout")),
                     "is not modelled for the vision tower (0 only: no dropout was measured)");
  for (const char* k : {"image_size", "patch_size"})
    if (const json* p = v.raw(k); p && !p->is_number_integer())
      throw InputError(v.name(k), dump_short(*p), "must be one positive integer (square images and patches)");
  s.id3_channels = v.positive({"num_channels"}, 3);
  s.id3_image_size = v.positive({"image_size"}, 224, kMaxImageSize);
  s.id3_patch = v.positive({"patch_size"}, 32, kMaxImageSize);
  if (s.id3_patch > s.id3_image_size)
    throw InputError(v.name("patch_size"), std::to_string(s.id3_patch),
                     "exceeds image_size (" + std::to_string(s.id3_image_size) + "): no patch fits the image");
}

}  // namespace

TransformerSpec import_idefics3(const ConfigReader& r, const std::string& type) {
  TransformerSpec s;
  const json* tc = r.raw("text_config");
  if (tc && !tc->is_object()) throw InputError(r.name("text_config"), dump_short(*tc), "must be a JSON object");
  if (tc) {
    const ConfigReader t(*tc, r.name("text_config."));
    const std::string mt = t.string({"model_type"}, "llama");
    if (mt != "llama")
      throw InputError(t.name("model_type"), "\"" + mt + "\"",
                       "is not modelled as the text model of " + type + " (llama is)");
    read_text(t, s);
    check_padding_idx(t, s.vocab_size);
  } else {
    // LlamaConfig(rms_norm_eps=1e-5, pad_token_id=self.pad_token_id): the outer pad id becomes the embedding's
    // padding_idx, which nn.Embedding checks against the default vocabulary.
    static const json kEmpty = json::object();
    read_text(ConfigReader(kEmpty, r.name("text_config.")), s);
    const json* pad = r.raw("pad_token_id");
    if (!r.explicit_null("pad_token_id")) {
      const int64_t p = pad ? r.non_negative({"pad_token_id"}, 0) : 128002;
      if (p >= s.vocab_size)
        throw InputError(r.name("pad_token_id"), std::to_string(p),
                         "becomes the default Llama text model's padding_idx (no text_config), outside its vocabulary "
                         "of " + std::to_string(s.vocab_size) + ": nn.Embedding raises");
    }
  }
  static const json kEmptyVision = json::object();
  const json* vc = r.raw("vision_config");
  if (vc && !vc->is_object()) throw InputError(r.name("vision_config"), dump_short(*vc), "must be a JSON object");
  read_vision(ConfigReader(vc ? *vc : kEmptyVision, r.name("vision_config.")), s);
  s.id3_scale_factor = r.positive({"scale_factor"}, 2, kMaxImageSize);
  // A scale_factor that does not divide image_size // patch_size builds (the class defaults, 224 / 32 = 7 with 2,
  // do) but its pixel shuffle raises on images: the builder refuses images then, text-only runs are modelled.
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  return s;
}

}  // namespace memplan::hf
