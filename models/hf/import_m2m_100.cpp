// M2M100Config (transformers 5.17 models/m2m_100/configuration_m2m_100.py), the model of
// M2M100ForConditionalGeneration (M2M-100 and NLLB-200 checkpoints).
//
// Class defaults: vocab 128112, max_position_embeddings 1024, encoder / decoder: 12 layers, ffn 4096, 16 heads;
// d_model 1024, activation "relu", dropout 0.1, attention_dropout 0.1, activation_dropout 0,
// encoder_layerdrop / decoder_layerdrop 0.05, scale_embedding True, pad 1, bos 0, eos 2, decoder_start 2,
// tie_word_embeddings True. attribute_map: hidden_size -> d_model, num_attention_heads -> encoder_attention_heads,
// num_hidden_layers -> encoder_layers. M2M100Attention raises unless the heads divide d_model.
// The stacks' keys are BartConfig's spellings, but read here with M2M100's own defaults (read_bart_stacks
// hard-codes BART's gelu, attention_dropout 0, scale_embedding false and refuses LayerDrop, M2M100's default).
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_m2m_100(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::t5;  // an encoder-decoder (engine/arch/spec.h)
  s.vocab_size = r.positive({"vocab_size"}, 128112);
  s.hidden_size = r.positive({"d_model", "hidden_size"}, 1024);
  s.num_layers = r.positive({"encoder_layers", "num_hidden_layers"}, 12, kMaxLayers);
  s.num_decoder_layers = r.positive({"decoder_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"encoder_attention_heads", "num_attention_heads"}, 16);
  s.decoder_num_heads = r.positive({"decoder_attention_heads"}, 16);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads,
                                    r.present("encoder_attention_heads") || !r.present("num_attention_heads")
                                        ? "encoder_attention_heads"
                                        : "num_attention_heads",
                                    "d_model");
  (void)head_dim_from_hidden(r, s.hidden_size, s.decoder_num_heads, "decoder_attention_heads", "d_model");
  s.intermediate_size = r.positive({"encoder_ffn_dim"}, 4096);
  s.decoder_intermediate_size = r.positive({"decoder_ffn_dim"}, 4096);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 1024);
  s.hidden_act = r.string({"activation_function"}, "relu");
  if (!is_single_kernel_activation(s.hidden_act) && s.hidden_act != "relu")
    throw InputError(r.name("activation_function"), "\"" + s.hidden_act + "\"",
                     "is not modelled (relu, gelu, gelu_pytorch_tanh, silu)");
  s.resid_dropout = r.probability({"dropout"}, 0.1);
  s.embd_dropout = s.resid_dropout;
  s.attn_dropout = r.probability({"attention_dropout"}, 0.1);
  s.activation_dropout = r.probability({"activation_dropout"}, 0.0);
  // LayerDrop: a CPU draw per layer and training step (no device memory); the builder replays the step in which
  // every layer runs (engine/arch/spec.h [m2m_100]).
  s.m2m_encoder_layerdrop = r.probability({"encoder_layerdrop"}, 0.05);
  s.m2m_decoder_layerdrop = r.probability({"decoder_layerdrop"}, 0.05);
  s.scale_embedding = r.boolean({"scale_embedding"}, true);
  // An untied lm_head (its own [V, d] weight) is not measured: refused.
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  if (!s.tie_word_embeddings)
    throw InputError(r.name("tie_word_embeddings"), "false", "an untied lm_head is not modelled (true only)");
  // pad_token_id is the sinusoidal positions' padding_idx (their ids are built with input_ids.ne(pad)) and
  // shift_tokens_right's fill: None raises in both.
  if (r.explicit_null("pad_token_id"))
    throw InputError(r.name("pad_token_id"), "null", "the positions and shift_tokens_right need a pad token id");
  s.m2m_padding_idx = r.non_negative({"pad_token_id"}, 1);
  if (s.m2m_padding_idx >= s.vocab_size)
    throw InputError(r.name("pad_token_id"), std::to_string(s.m2m_padding_idx),
                     "must be below vocab_size (" + std::to_string(s.vocab_size) + ")");
  if (r.explicit_null("decoder_start_token_id"))
    throw InputError(r.name("decoder_start_token_id"), "null", "shift_tokens_right writes it: None raises");
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
  return s;
}

}  // namespace memplan::hf
