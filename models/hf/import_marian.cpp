// MarianConfig (transformers 5.17 models/marian/configuration_marian.py), the model of MarianMTModel
// (engine/arch/seq2seq/marian.cpp), and PegasusConfig (models/pegasus/configuration_pegasus.py), the model of
// PegasusForConditionalGeneration (the same builder file).
//
// Marian class defaults: vocab 58101, decoder_vocab_size None (= vocab_size), max_position_embeddings 1024,
// encoder / decoder: 12 layers, ffn 4096, 16 heads; d_model 1024, activation "gelu", dropout 0.1,
// attention_dropout 0, activation_dropout 0, layerdrops 0, scale_embedding False, pad 58100,
// decoder_start 58100, share_encoder_decoder_embeddings True, tie_word_embeddings True.
// Pegasus class defaults: vocab 50265, max_position_embeddings 1024, 12 + 12 layers, ffn 4096, 16 heads, d_model
// 1024, "gelu", dropout 0.1, attention / activation dropout 0, scale_embedding False, pad 0, decoder_start 0,
// tie_word_embeddings True.
// attribute_map (both): hidden_size -> d_model, num_attention_heads -> encoder_attention_heads, num_hidden_layers
// -> encoder_layers. The stacks are read by read_bart_stacks (models/hf/import_mbart.cpp).
// Positions: a sinusoidal table of max_position_embeddings rows (no offset) per stack; an index past it is a device
// assert (learned_positions: estimate.cpp checks seq_len; the builder target_len and generate_tokens).
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// shift_tokens_right writes decoder_start_token_id into column 0 (None raises) and generate() starts from it.
void check_start_token(const ConfigReader& r) {
  if (r.explicit_null("decoder_start_token_id"))
    throw InputError(r.name("decoder_start_token_id"), "null",
                     "shift_tokens_right and generate() need a decoder start token id");
}

}  // namespace

TransformerSpec import_marian(const ConfigReader& r) {
  TransformerSpec s;
  read_bart_stacks(r, s, {58101, 1024, 12, 16, 4096, 0.1});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 1024);
  s.learned_positions = true;
  check_start_token(r);
  // Separate encoder / decoder vocabularies (share_encoder_decoder_embeddings false: two token tables, lm_head tied
  // to the decoder's) are not measured.
  if (!r.boolean({"share_encoder_decoder_embeddings"}, true))
    throw InputError(r.name("share_encoder_decoder_embeddings"), "false",
                     "separate encoder and decoder embeddings are not modelled (true only)");
  // decoder_vocab_size: None means vocab_size; another size with shared embeddings makes the loss's
  // view(-1, decoder_vocab_size) disagree with the [.., vocab_size] logits.
  if (r.present("decoder_vocab_size")) {
    const int64_t dv = r.positive({"decoder_vocab_size"}, s.vocab_size);
    if (dv != s.vocab_size)
      throw InputError(r.name("decoder_vocab_size"), std::to_string(dv),
                       "must equal vocab_size (" + std::to_string(s.vocab_size) + ") with shared embeddings");
  }
  return s;
}

TransformerSpec import_pegasus(const ConfigReader& r) {
  TransformerSpec s;
  read_bart_stacks(r, s, {50265, 1024, 12, 16, 4096, 0.1});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 1024);
  s.learned_positions = true;
  check_start_token(r);
  return s;
}

}  // namespace memplan::hf
