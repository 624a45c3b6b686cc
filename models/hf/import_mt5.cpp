// MT5Config and UMT5Config (transformers 5.17 models/mt5/configuration_mt5.py, models/umt5/configuration_umt5.py),
// the models of MT5ForConditionalGeneration (the T5 builder) and UMT5ForConditionalGeneration (engine/arch/seq2seq/
// umt5.cpp). Both classes share their fields and defaults: vocab 250112, d_model 512, d_kv 64, d_ff 1024,
// num_layers 8, num_decoder_layers None (-> num_layers), num_heads 6, relative_attention_num_buckets 32,
// relative_attention_max_distance 128, dropout_rate 0.1, feed_forward_proj "gated-gelu", pad_token_id 0,
// decoder_start_token_id 0. attribute_map: hidden_size -> d_model, num_attention_heads -> num_heads,
// num_hidden_layers -> num_layers, head_dim -> d_kv.
// __post_init__: dense_act_fn is the part of feed_forward_proj after the last "-" ("gated-gelu" means gelu_new),
// is_gated_act whether it starts with "gated"; tie_word_embeddings is forced True (lm_head is the shared
// embedding, whatever config.json says). The forward passes differ: MT5ForConditionalGeneration never rescales
// the decoder output, UMT5ForConditionalGeneration always does (sequence_output * d_model**-0.5, as
// tie_word_embeddings is always True). validate_architecture: feed_forward_proj is "<act>" or "gated-<act>".
#include "models/hf/import_t5.h"

namespace memplan::hf {

TransformerSpec import_mt5(const ConfigReader& r, const std::string& type) {
  TransformerSpec s;
  read_t5_stacks(r, s, {250112, 1024, 8, 6, "gated-gelu"}, type);
  (void)r.boolean({"tie_word_embeddings"}, true);  // read for its type only: __post_init__ forces True
  s.tie_word_embeddings = true;
  s.scale_decoder_outputs = type == "umt5";
  // _shift_right (training) raises without either id; generate starts the decoder from decoder_start_token_id.
  for (const char* key : {"decoder_start_token_id", "pad_token_id"})
    if (r.explicit_null(key))
      throw InputError(r.name(key), "null", "has to be defined: " + type + "'s _shift_right raises without it");
  // Relative position buckets, no position table: nothing bounds the sequence length. The classes have no
  // n_positions; T5's 512 is the informational context (serve's default --max-model-len).
  s.max_position_embeddings = r.positive({"n_positions"}, 512);
  return s;
}

}  // namespace memplan::hf
