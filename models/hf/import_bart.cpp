// BartConfig (transformers 5.17 models/bart/configuration_bart.py), the model of BartForConditionalGeneration.
//
// Class defaults: vocab 50265, max_position_embeddings 1024, encoder_layers 12, encoder_ffn_dim 4096,
// encoder_attention_heads 16, decoder_layers 12, decoder_ffn_dim 4096, decoder_attention_heads 16,
// encoder_layerdrop 0, decoder_layerdrop 0, activation_function "gelu", d_model 1024, dropout 0.1,
// attention_dropout 0, activation_dropout 0, scale_embedding False, pad 1, bos 0, eos 2, decoder_start 2,
// tie_word_embeddings True. attribute_map: hidden_size -> d_model, num_attention_heads -> encoder_attention_heads,
// num_hidden_layers -> encoder_layers. BartAttention needs d_model % heads == 0 (it raises otherwise).
// Keys of older checkpoints (normalize_before, add_final_layer_norm, add_bias_logits, static_position_embeddings)
// are plain attributes the 5.17 modeling code never reads: BART is always post-LN with learned positions. The
// stacks are read by read_bart_stacks (models/hf/import_mbart.cpp), shared with MBartConfig and WhisperConfig.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_bart(const ConfigReader& r) {
  TransformerSpec s;
  read_bart_stacks(r, s, {50265, 1024, 12, 16, 4096, 0.1, /*gelu_new=*/true});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 1024);
  return s;
}

}  // namespace memplan::hf
