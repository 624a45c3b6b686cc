// Qwen2AudioConfig (transformers 5.17 models/qwen2_audio/configuration_qwen2_audio.py) and what
// Qwen2AudioForConditionalGeneration (engine/arch/audio/qwen2_audio.cpp) reads of it: the Qwen2 decoder from
// text_config, read by the qwen2 importer (import_sub_decoder), into the TransformerSpec's main fields; the audio
// encoder from audio_config into the [qwen2_audio] audio_* fields and num_mel_bins / max_source_positions.
//
// Qwen2AudioConfig defaults: text_config None -> Qwen2Config() (a dict without model_type is "qwen2"); audio_config
// None -> Qwen2AudioEncoderConfig(d_model 1280, encoder_attention_heads 20, encoder_ffn_dim 5120, encoder_layerdrop
// 0, encoder_layers 32, num_mel_bins 128, max_source_positions 1500, scale_embedding False, activation_function
// "gelu") (a dict without model_type is "qwen2_audio_encoder", whose class defaults are the same sizes, dropout /
// attention_dropout / activation_dropout 0); audio_token_index 151646.
// Keys that change no allocation (read for their type only): audio_token_index / audio_token_id (the harness
// places the tokens), ignore_index, the top-level vocab_size (the model reads text_config's), scale_embedding (the
// encoder computes embed_scale and never applies it), initializer_range, tie_word_embeddings (the class declares
// no tied weights: lm_head is its own [V, H] parameter whatever the flag says).
// Refused, naming the key: a text model_type other than qwen2, an audio model_type other than
// qwen2_audio_encoder, heads not dividing d_model, an activation_function other than gelu, encoder_layerdrop > 0
// (each training step skips random layers), and everything the qwen2 importer refuses.
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

const json& sub_object(const ConfigReader& r, const char* key) {
  static const json kEmpty = json::object();
  const json* v = r.raw(key);
  if (!v) return kEmpty;
  if (!v->is_object()) throw InputError(r.name(key), dump_short(*v), "must be a JSON object");
  return *v;
}

}  // namespace

TransformerSpec import_qwen2_audio(const ConfigReader& r) {
  // (1) The text decoder.
  const ConfigReader t(sub_object(r, "text_config"), r.name("text_config."));
  const std::string text_type = t.string({"model_type"}, "qwen2");
  if (text_type != "qwen2")
    throw InputError(t.name("model_type"), "\"" + text_type + "\"",
                     "is not modelled as a qwen2_audio text model (qwen2 is)");
  TransformerSpec s = import_sub_decoder(t, text_type);
  s.mm_text_type = text_type;
  (void)r.boolean({"tie_word_embeddings"}, false);
  s.tie_word_embeddings = false;

  // (2) The audio encoder.
  const ConfigReader a(sub_object(r, "audio_config"), r.name("audio_config."));
  const std::string at = a.string({"model_type"}, "qwen2_audio_encoder");
  if (at != "qwen2_audio_encoder")
    throw InputError(a.name("model_type"), "\"" + at + "\"",
                     "is not modelled as a qwen2_audio audio tower (qwen2_audio_encoder is)");
  s.audio_d_model = a.positive({"d_model"}, 1280);
  s.audio_layers = a.positive({"encoder_layers"}, 32, kMaxLayers);
  s.audio_heads = a.positive({"encoder_attention_heads"}, 20);
  if (s.audio_d_model % s.audio_heads != 0)
    throw InputError(a.name("encoder_attention_heads"), std::to_string(s.audio_heads),
                     "does not divide d_model (" + std::to_string(s.audio_d_model) + "): the attention raises");
  s.audio_ffn = a.positive({"encoder_ffn_dim"}, 5120);
  s.num_mel_bins = a.positive({"num_mel_bins"}, 128);
  s.max_source_positions = a.positive({"max_source_positions"}, 1500);
  if (s.max_source_positions < 2)
    throw InputError(a.name("max_source_positions"), std::to_string(s.max_source_positions),
                     "leaves no audio token after the encoder's AvgPool1d(2, 2)");
  s.audio_act = a.string({"activation_function"}, "gelu");
  if (s.audio_act != "gelu")
    throw InputError(a.name("activation_function"), "\"" + s.audio_act + "\"", "is not modelled (gelu is)");
  s.audio_dropout = a.probability({"dropout"}, 0.0);
  s.audio_attn_dropout = a.probability({"attention_dropout"}, 0.0);
  s.audio_act_dropout = a.probability({"activation_dropout"}, 0.0);
  if (a.probability({"encoder_layerdrop"}, 0.0) != 0.0)
    throw InputError(a.name("encoder_layerdrop"), dump_short(*a.raw("encoder_layerdrop")),
                     "is not modelled (random layers skipped in training; 0 is)");
  (void)a.boolean({"scale_embedding"}, false);
  a.opt_positive_number({"initializer_range"});

  // (3) Keys the harness or the processor read.
  r.non_negative({"audio_token_index", "audio_token_id"}, 151646);
  (void)r.opt_positive({"vocab_size"});
  if (const json* ii = r.raw("ignore_index"); ii && !ii->is_number_integer())
    throw InputError(r.name("ignore_index"), dump_short(*ii), "must be an integer");
  return s;
}

}  // namespace memplan::hf
