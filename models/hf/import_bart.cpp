// BartConfig (transformers 5.17 models/bart/configuration_bart.py), the model of BartForConditionalGeneration.
//
// Class defaults: vocab 50265, max_position_embeddings 1024, encoder_layers 12, encoder_ffn_dim 4096,
// encoder_attention_heads 16, decoder_layers 12, decoder_ffn_dim 4096, decoder_attention_heads 16,
// encoder_layerdrop 0, decoder_layerdrop 0, activation_function "gelu", d_model 1024, dropout 0.1,
// attention_dropout 0, activation_dropout 0, scale_embedding False, pad 1, bos 0, eos 2, decoder_start 2,
// tie_word_embeddings True. attribute_map: hidden_size -> d_model, num_attention_heads -> encoder_attention_heads,
// num_hidden_layers -> encoder_layers. BartAttention needs d_model % heads == 0 (it raises otherwise).
// Keys of older checkpoints (normalize_before, add_final_layer_norm, add_bias_logits, static_position_embeddings)
// are plain attributes the 5.17 modeling code never reads: BART is always post-LN with learned positions.
#include "engine/arch/decoders/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_bart(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::t5;  // the encoder-decoder family (target_len, EncoderDecoderCache)
  s.vocab_size = r.positive({"vocab_size"}, 50265);
  s.hidden_size = r.positive({"d_model", "hidden_size"}, 1024);
  s.num_layers = r.positive({"encoder_layers", "num_hidden_layers"}, 12, kMaxLayers);
  s.num_decoder_layers = r.positive({"decoder_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"encoder_attention_heads", "num_attention_heads"}, 16);
  s.decoder_num_heads = r.positive({"decoder_attention_heads"}, 16);
  auto heads_divide = [&](int64_t heads, const char* key) {
    if (s.hidden_size % heads != 0)
      throw InputError(r.name(key), std::to_string(heads),
                       "must divide d_model (" + std::to_string(s.hidden_size) + ")");
  };
  heads_divide(s.num_heads,
               r.present("encoder_attention_heads") || !r.present("num_attention_heads") ? "encoder_attention_heads"
                                                                                        : "num_attention_heads");
  heads_divide(s.decoder_num_heads, "decoder_attention_heads");
  s.num_kv_heads = s.num_heads;
  s.head_dim = s.hidden_size / s.num_heads;
  s.intermediate_size = r.positive({"encoder_ffn_dim"}, 4096);
  s.decoder_intermediate_size = r.positive({"decoder_ffn_dim"}, 4096);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 1024);
  s.resid_dropout = s.embd_dropout = r.probability({"dropout"}, 0.1);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.activation_dropout = r.probability({"activation_dropout"}, 0.0);
  s.hidden_act = r.string({"activation_function"}, "gelu");
  if (!is_single_kernel_activation(s.hidden_act) && s.hidden_act != "gelu_new")
    throw InputError(r.name("activation_function"), "\"" + s.hidden_act + "\"",
                     "is not modelled for bart (gelu, gelu_new, gelu_pytorch_tanh, relu, silu)");
  for (const char* key : {"encoder_layerdrop", "decoder_layerdrop"})
    if (r.probability({key}, 0.0) > 0.0)
      throw InputError(r.name(key), dump_short(*r.raw(key)),
                       "LayerDrop skips random layers each step: not modelled (0 only)");
  s.scale_embedding = r.boolean({"scale_embedding"}, false);
  // lm_head shares model.shared's weight; an untied head (tie_word_embeddings false) is not modelled.
  if (!r.boolean({"tie_word_embeddings"}, true))
    throw InputError(r.name("tie_word_embeddings"), "false",
                     "an lm_head untied from the shared embedding is not modelled for bart (true only)");
  s.tie_word_embeddings = true;
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
  return s;
}

}  // namespace memplan::hf
