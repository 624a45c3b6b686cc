// Ministral3Config (transformers 5.17 models/ministral3/configuration_ministral3.py), the position-scaled rope
// dict it shares with Mistral4Config, and Mistral3Config's text_config (models/mistral3/configuration_mistral3.py).
//
// Ministral3Config defaults: vocab 131072, hidden 4096, intermediate 14336, 34 layers, 32 heads,
// num_key_value_heads 8 (None => heads), head_dim 128 (None => hidden // heads), silu, max_position_embeddings
// 262144, pad_token_id 11, tie False, sliding_window None, attention_dropout 0.0; rope_parameters None => yarn
// (rope_theta 1e6, factor 16, original_max_position_embeddings 16384, llama_4_scaling_beta 0.1). Ministral3Attention
// has no biases; Ministral3MLP is LlamaMLP with hidden_act.
// Refused, naming the field: quantization_config (the published Instruct checkpoints' fp8 weights), a rope dict without llama_4_scaling_beta or original_max_position_embeddings
// (Ministral3Attention.forward computes 1 + beta * log(1 + floor(position / max)) from them every forward: None
// raises a TypeError), rope types the engine does not model, hidden_act other than silu.
//
// Mistral3Config (mistral3): the decoder is CONFIG_MAPPING[text_config.model_type](**text_config), with
// model_type "mistral" when the key is absent; without a text_config at all, a MistralConfig of
// Mistral-Small-3.1-24B's shape (hidden 5120, intermediate 32768, 40 layers, 32 heads, 8 KV heads, head_dim 128,
// max_position_embeddings 131072, vocab 131072, sliding_window None, rope_theta 1e9). Modelled for text_config of
// mistral (Mistral-Small-3.x, through the llama family's importer with MistralConfig's own defaults for keys it
// lacks), ministral3 and mistral4: their text decoder only (the Pixtral vision tower and the projector are left
// out, as gemma3's); anything else refused naming config.text_config.model_type. Mistral3ForConditionalGeneration
// ties its lm_head to the decoder's embeddings per the top-level tie_word_embeddings (default True).
#include "models/hf_config_reader.h"

namespace memplan::hf {

void check_llama4_scaled_rope(const ConfigReader& r, const char* family) {
  check_rope_type(r, family);
  for (const char* k : {"rope_parameters", "rope_scaling"}) {
    const json* d = r.raw(k);
    if (!d) continue;  // absent or null: the class's default dict (which carries both keys)
    const std::string field = r.name(k);
    auto beta = d->find("llama_4_scaling_beta");
    if (beta == d->end() || !beta->is_number())
      throw InputError(field + ".llama_4_scaling_beta", beta == d->end() ? "absent" : dump_short(*beta),
                       std::string("must be a number: ") + family +
                           " scales the queries by 1 + beta * log(1 + floor(position / "
                           "original_max_position_embeddings)) in every forward");
    auto omax = d->find("original_max_position_embeddings");
    if (omax == d->end() || !omax->is_number() || !(omax->get<double>() > 0))
      throw InputError(field + ".original_max_position_embeddings", omax == d->end() ? "absent" : dump_short(*omax),
                       std::string("must be a positive number: ") + family +
                           "'s query scaling divides the positions by it in every forward");
    return;
  }
}

namespace {

// pad_token_id (default 11) indexes the embedding table (nn.Embedding's padding_idx).
void check_pad_default_11(const ConfigReader& r, int64_t vocab) {
  if (r.explicit_null("pad_token_id")) return;
  if (r.raw("pad_token_id")) return check_padding_idx(r, vocab);
  if (vocab <= 11)
    throw InputError(r.name("vocab_size"), std::to_string(vocab),
                     "must exceed the default pad_token_id 11 (nn.Embedding's padding_idx) or set pad_token_id");
}

}  // namespace

void check_mistral_pad(const ConfigReader& r, int64_t vocab) { check_pad_default_11(r, vocab); }

void refuse_quantized_mistral(const ConfigReader& r, const char* family) {
  if (r.raw("quantization_config") != nullptr)
    throw InputError(r.name("quantization_config"), "present",
                     std::string("quantized ") + family +
                         " weights (the published fp8 checkpoints) are not modelled; remove the key to size the "
                         "bf16 model");
}

TransformerSpec import_ministral3(const ConfigReader& r) {
  refuse_quantized_mistral(r, "ministral3");
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 131072);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 14336);
  s.num_layers = r.positive({"num_hidden_layers"}, 34, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(r.explicit_null("num_key_value_heads") ? s.num_heads : 8);
  check_kv_heads(r, s);
  if (auto hd = r.opt_positive({"head_dim"})) {
    s.head_dim = *hd;
  } else if (r.explicit_null("head_dim")) {
    s.head_dim = s.hidden_size / s.num_heads;  // hidden_size // num_attention_heads
    if (s.head_dim == 0)
      throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                       "exceeds hidden_size (" + std::to_string(s.hidden_size) + "): head_dim null would be 0");
  } else {
    s.head_dim = 128;
  }
  if (s.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim), "must be even (rotate_half pairs dimensions)");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 262144);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "ministral3 is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.sliding_window = r.opt_positive({"sliding_window"}).value_or(0);  // None: full attention
  s.first_sliding_layer = 0;
  check_llama4_scaled_rope(r, "ministral3");
  check_pad_default_11(r, s.vocab_size);
  return s;
}

TransformerSpec import_mistral3(const ConfigReader& r, std::string& type) {
  refuse_quantized_mistral(r, "mistral3");
  const json* tc = r.raw("text_config");
  static const json kEmpty = json::object();
  if (tc && !tc->is_object()) throw InputError(r.name("text_config"), dump_short(*tc), "must be a JSON object");
  const ConfigReader text(tc ? *tc : kEmpty, r.name("text_config."));
  const std::string text_type = text.string({"model_type"}, "mistral");
  TransformerSpec s;
  // Mistral3Config.__init__'s text_config when none is given (configuration_mistral3.py).
  static const json kSmall31 = {{"model_type", "mistral"},     {"attention_dropout", 0.0},
                                {"head_dim", 128},             {"hidden_act", "silu"},
                                {"hidden_size", 5120},         {"intermediate_size", 32768},
                                {"max_position_embeddings", 131072}, {"num_attention_heads", 32},
                                {"num_hidden_layers", 40},     {"num_key_value_heads", 8},
                                {"rms_norm_eps", 1e-05},       {"rope_theta", 1e9},
                                {"sliding_window", nullptr},   {"vocab_size", 131072}};
  if (text_type == "ministral3")
    s = import_ministral3(text);
  else if (text_type == "mistral4")
    s = import_mistral4(text);
  else if (text_type == "mistral")
    s = import_sub_decoder(tc ? text : ConfigReader(kSmall31, r.name("text_config.")), "mistral");
  else
    throw InputError(text.name("model_type"), "\"" + text_type + "\"",
                     "mistral3 is modelled for a mistral, ministral3 or mistral4 text_config (its text decoder only)");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.modelled_part = "text decoder only";
  type = text_type;
  return s;
}

}  // namespace memplan::hf
