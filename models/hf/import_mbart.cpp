// MBartConfig (transformers 5.17 models/mbart/configuration_mbart.py) and what MBartForConditionalGeneration reads
// of it; read_bart_stacks is shared with BartConfig and WhisperConfig (models/hf/import_bart.cpp,
// import_whisper.cpp), whose encoder-decoder keys are spelt the same.
//
// MBart class defaults: vocab 50265, max_position_embeddings 1024, encoder / decoder: 12 layers, ffn 4096,
// 16 heads; d_model 1024, activation "gelu", dropout 0.1, attention_dropout 0, activation_dropout 0,
// encoder_layerdrop / decoder_layerdrop 0, scale_embedding False, pad_token_id 1, tie_word_embeddings True.
// attribute_map: hidden_size -> d_model, num_attention_heads -> encoder_attention_heads, num_hidden_layers ->
// encoder_layers. MBartAttention raises unless the heads divide d_model. Generation keys: bos 0, eos 2, decoder_start
// None, forced_eos 2.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

void read_bart_stacks(const ConfigReader& r, TransformerSpec& s, const BartDefaults& d) {
  s.family = TransformerSpec::Family::t5;  // an encoder-decoder (engine/arch/spec.h)
  s.vocab_size = r.positive({"vocab_size"}, d.vocab);
  s.hidden_size = r.positive({"d_model", "hidden_size"}, d.d_model);
  s.num_layers = r.positive({"encoder_layers", "num_hidden_layers"}, d.layers, kMaxLayers);
  s.num_decoder_layers = r.positive({"decoder_layers"}, d.layers, kMaxLayers);
  s.num_heads = r.positive({"encoder_attention_heads", "num_attention_heads"}, d.heads);
  s.decoder_num_heads = r.positive({"decoder_attention_heads"}, d.heads);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads,
                                    r.present("encoder_attention_heads") || !r.present("num_attention_heads")
                                        ? "encoder_attention_heads"
                                        : "num_attention_heads",
                                    "d_model");
  (void)head_dim_from_hidden(r, s.hidden_size, s.decoder_num_heads, "decoder_attention_heads", "d_model");
  s.intermediate_size = r.positive({"encoder_ffn_dim"}, d.ffn);
  s.decoder_intermediate_size = r.positive({"decoder_ffn_dim"}, d.ffn);
  s.hidden_act = r.string({"activation_function"}, "gelu");
  if (!is_single_kernel_activation(s.hidden_act) && s.hidden_act != "relu" && !(d.gelu_new && s.hidden_act == "gelu_new"))
    throw InputError(r.name("activation_function"), "\"" + s.hidden_act + "\"",
                     d.gelu_new ? "is not modelled (relu, gelu, gelu_new, gelu_pytorch_tanh, silu)"
                                : "is not modelled (relu, gelu, gelu_pytorch_tanh, silu)");
  s.resid_dropout = r.probability({"dropout"}, d.dropout);
  s.embd_dropout = s.resid_dropout;
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.activation_dropout = r.probability({"activation_dropout"}, 0.0);
  // LayerDrop skips random layers in training (a draw per layer and step): not modelled.
  for (const char* key : {"encoder_layerdrop", "decoder_layerdrop"})
    if (r.probability({key}, 0.0) > 0.0)
      throw InputError(r.name(key), dump_short(*r.raw(key)), "LayerDrop skips random layers each step: not modelled (0 only)");
  s.scale_embedding = r.boolean({"scale_embedding"}, false);
  // An untied head (lm_head / proj_out with its own [V, d] weight) is not measured: refused.
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  if (!s.tie_word_embeddings)
    throw InputError(r.name("tie_word_embeddings"), "false", "an untied output projection is not modelled (true only)");
  // shift_tokens_right raises without a pad token (MBart wraps the last non-pad token; Whisper fills -100 with it).
  if (r.explicit_null("pad_token_id"))
    throw InputError(r.name("pad_token_id"), "null", "shift_tokens_right needs a pad token id");
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
}

TransformerSpec import_mbart(const ConfigReader& r) {
  TransformerSpec s;
  read_bart_stacks(r, s, {50265, 1024, 12, 16, 4096, 0.1});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 1024);
  s.learned_positions = true;  // seq_len <= max_position_embeddings (estimate.cpp); target_len: the builder
  // generate() (GenerationMixin's): decoder_input_ids start as [B, 1] decoder_start_token_id (None falls back to
  // bos_token_id; both None raise); the min-length processors need eos_token_id (class default 2; null: none);
  // forced_eos_token_id (class default 2) adds ForcedEOSTokenLogitsProcessor.
  if (r.explicit_null("decoder_start_token_id") && r.explicit_null("bos_token_id"))
    throw InputError(r.name("decoder_start_token_id"), "null",
                     "generate() needs a decoder start token (decoder_start_token_id or bos_token_id)");
  s.generate_decoder_prompt = 1;
  s.generate_without_eos = r.explicit_null("eos_token_id");
  s.generate_forced_eos = !r.explicit_null("forced_eos_token_id");
  return s;
}

}  // namespace memplan::hf
