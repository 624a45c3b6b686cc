// WhisperConfig (transformers 5.17 models/whisper/configuration_whisper.py) and what
// WhisperForConditionalGeneration reads of it.
//
// Class defaults (whisper-tiny's sizes): vocab 51865, num_mel_bins 80, encoder / decoder: 4 layers, 6 heads,
// ffn 1536; d_model 384, activation "gelu", dropout / attention_dropout / activation_dropout 0, layerdrops 0,
// scale_embedding False, max_source_positions 1500, max_target_positions 448, apply_spec_augment False,
// tie_word_embeddings True. attribute_map: hidden_size -> d_model, num_attention_heads ->
// encoder_attention_heads, num_hidden_layers -> encoder_layers. The input features must hold
// 2 x max_source_positions frames (WhisperEncoder raises otherwise: the builder checks seq_len), the labels at
// most max_target_positions tokens (WhisperForConditionalGeneration raises: the builder checks target_len).
// Generation keys: decoder_start 50257, eos 50256, suppress_tokens None, begin_suppress_tokens (220, 50256),
// forced_decoder_ids absent.
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// A token-id list key (suppress_tokens, begin_suppress_tokens): whether generate() builds its processor (the list
// given, or absent with the class default `dflt` set; null: none).
bool token_list_set(const ConfigReader& r, const char* key, bool dflt) {
  const json* v = r.raw(key);
  if (v == nullptr) return r.explicit_null(key) ? false : dflt;
  if (!v->is_array()) throw InputError(r.name(key), dump_short(*v), "must be a list of token ids or null");
  for (const json& t : *v)
    if (!t.is_number_integer() || t.get<int64_t>() < 0)
      throw InputError(r.name(key), dump_short(*v), "must be a list of non-negative token ids");
  return true;
}

// WhisperGenerationMixin._retrieve_init_tokens for a model built from its config (no task, language or lang_to_id
// in the generation config; the harness sets no_timestamps_token_id to vocab_size - 1502, as the published
// generation configs have it): [decoder_start_token_id], then forced_decoder_ids' tokens at positions 1, 2, ...
// (a null token dropped), then <|notimestamps|> unless it is already last.
int64_t whisper_init_tokens(const ConfigReader& r, int64_t vocab) {
  const json* v = r.raw("forced_decoder_ids");
  int64_t n = 1, last = -1;
  if (v != nullptr) {
    if (!v->is_array()) throw InputError(r.name("forced_decoder_ids"), dump_short(*v), "must be a list of [index, token]");
    int64_t i = 1;
    for (const json& e : *v) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || e[0].get<int64_t>() != i ||
          !(e[1].is_null() || e[1].is_number_integer()))
        throw InputError(r.name("forced_decoder_ids"), dump_short(*v),
                         "must list [index, token] for the indices 1, 2, ... in order (whisper's generate() raises)");
      ++i;
      if (e[1].is_null()) continue;
      ++n;
      last = e[1].get<int64_t>();
    }
  }
  return last == vocab - 1502 ? n : n + 1;
}

}  // namespace

TransformerSpec import_whisper(const ConfigReader& r) {
  TransformerSpec s;
  read_bart_stacks(r, s, {51865, 384, 4, 6, 1536, 0.0});
  s.num_mel_bins = r.positive({"num_mel_bins"}, 80);
  s.max_source_positions = r.positive({"max_source_positions"}, 1500);
  s.max_position_embeddings = r.positive({"max_target_positions"}, 448);
  // SpecAugment masks the input features in training (_mask_input_features): random masks, not modelled.
  if (r.boolean({"apply_spec_augment"}, false))
    throw InputError(r.name("apply_spec_augment"), "true", "SpecAugment's feature masking is not modelled (false only)");
  // use_weighted_layer_sum belongs to WhisperForAudioClassification, which is not modelled; read for its type.
  (void)r.boolean({"use_weighted_layer_sum"}, false);
  s.generate_without_eos = r.explicit_null("eos_token_id");
  s.generate_decoder_prompt = whisper_init_tokens(r, s.vocab_size);
  s.generate_begin_suppress = token_list_set(r, "begin_suppress_tokens", true);
  s.generate_suppress = token_list_set(r, "suppress_tokens", false);
  return s;
}

}  // namespace memplan::hf
