// T5GemmaConfig and T5GemmaModuleConfig (transformers 5.17 models/t5gemma/configuration_t5gemma.py) and what
// T5GemmaForConditionalGeneration reads of them (the installed modeling_t5gemma.py).
//
// T5GemmaConfig: encoder / decoder (a dict read as T5GemmaModuleConfig(**dict); absent or null: the module's class
// defaults), dropout_rate 0.0 and attention_dropout 0.0 (both copied into each module config: the layers' dropout
// and the attention's), tie_word_embeddings True (lm_head.out_proj tied to the decoder's embed_tokens), vocab_size
// 256000 (unread by the model: lm_head has decoder.vocab_size rows), is_encoder_decoder (forced True by the class);
// the decoder's cross_attention_hidden_size is set to encoder.hidden_size; bos / pad / eos default to the
// decoder's.
// T5GemmaModuleConfig class defaults: vocab 256000, hidden 2304, intermediate 9216, 26 layers, 8 heads, 4 kv heads,
// head_dim 256 (a field, not hidden // heads), hidden_activation gelu_pytorch_tanh, max_position_embeddings 8192
// (rotary: no table), attention_bias False, query_pre_attn_scalar 256 (the scale only), sliding_window 4096,
// layer_types alternating "sliding_attention" (even i) / "full_attention" (odd i), final_logit_softcapping 30.0
// (the decoder's is applied to the logits), attn_logit_softcapping 50.0 (eager only), pad_token_id 0,
// eos_token_id 1, bos_token_id 2; validate_architecture: hidden % heads == 0.
// Refused, naming the key: what the modeling file rejects (heads not dividing hidden_size or not a multiple of the
// kv heads, a null sliding_window (both stacks build a sliding mask), a null pad_token_id (make_default_2d_attention_mask
// and _shift_right raise), a null decoder bos_token_id (_shift_right's start token)), and an activation the builder
// does not model.
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

struct Module {
  int64_t vocab, hidden, intermediate, layers, heads, kv, head_dim, window;
  std::vector<uint8_t> sliding;
  std::string act;
  double final_cap, attn_cap;
  bool bias;
};

Module read_module(const ConfigReader& r) {
  Module m;
  m.vocab = r.positive({"vocab_size"}, 256000);
  m.hidden = r.positive({"hidden_size"}, 2304);
  m.intermediate = r.positive({"intermediate_size"}, 9216);
  m.layers = r.positive({"num_hidden_layers"}, 26, kMaxLayers);
  m.heads = r.positive({"num_attention_heads"}, 8);
  m.kv = r.positive({"num_key_value_heads"}, 4);
  if (m.heads % m.kv != 0)
    throw InputError(r.name("num_key_value_heads"), std::to_string(m.kv),
                     "must divide num_attention_heads (" + std::to_string(m.heads) + ")");
  if (m.hidden % m.heads != 0)  // validate_architecture
    throw InputError(r.name("num_attention_heads"), std::to_string(m.heads),
                     "must divide hidden_size (" + std::to_string(m.hidden) + ")");
  m.head_dim = r.positive({"head_dim"}, 256);
  if (m.head_dim % 2 != 0)
    throw InputError(r.name("head_dim"), std::to_string(m.head_dim), "must be even (rotate_half pairs dimensions)");
  (void)r.positive({"max_position_embeddings"}, 8192);
  m.act = r.string({"hidden_activation"}, "gelu_pytorch_tanh");
  check_gemma_activation(r, "hidden_activation", m.act, "t5gemma");
  m.bias = r.boolean({"attention_bias"}, false);
  r.opt_positive_number({"query_pre_attn_scalar"});
  m.final_cap = r.explicit_null("final_logit_softcapping")
                    ? 0.0
                    : r.opt_positive_number({"final_logit_softcapping"}).value_or(30.0);
  m.attn_cap = r.explicit_null("attn_logit_softcapping")
                   ? 0.0
                   : r.opt_positive_number({"attn_logit_softcapping"}).value_or(50.0);
  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null",
                     "must be set (each stack builds its sliding-window mask whatever layer_types holds)");
  m.window = r.positive({"sliding_window"}, 4096);
  TransformerSpec tmp;
  tmp.num_layers = m.layers;
  tmp.sliding_layers.assign(static_cast<size_t>(m.layers), 0);
  if (!read_sliding_layer_types(r, tmp))
    for (int64_t i = 0; i < m.layers; ++i) tmp.sliding_layers[static_cast<size_t>(i)] = (i + 1) % 2 != 0 ? 1 : 0;
  m.sliding = tmp.sliding_layers;
  if (r.explicit_null("pad_token_id"))
    throw InputError(r.name("pad_token_id"), "null",
                     "make_default_2d_attention_mask needs a pad token id (the attention mask is ids != pad)");
  check_padding_idx(r, m.vocab);
  return m;
}

}  // namespace

TransformerSpec import_t5gemma(const ConfigReader& r) {
  static const json kEmpty = json::object();
  auto sub = [&](const char* key) {
    const json* j = r.raw(key);
    if (j && !j->is_object()) throw InputError(r.name(key), dump_short(*j), "must be a JSON object");
    return ConfigReader(j ? *j : kEmpty, r.name(std::string(key) + "."));
  };
  const ConfigReader er = sub("encoder"), dr = sub("decoder");
  const Module e = read_module(er), d = read_module(dr);
  if (dr.explicit_null("bos_token_id"))
    throw InputError(dr.name("bos_token_id"), "null", "_shift_right starts decoder_input_ids with it");
  (void)r.positive({"vocab_size"}, 256000);
  TransformerSpec s;
  s.family = TransformerSpec::Family::t5;  // an encoder-decoder (engine/arch/spec.h)
  s.vocab_size = d.vocab;
  s.hidden_size = d.hidden;
  s.intermediate_size = d.intermediate;
  s.num_layers = e.layers;
  s.num_decoder_layers = d.layers;
  s.num_heads = d.heads;
  s.num_kv_heads = d.kv;
  s.head_dim = d.head_dim;
  s.hidden_act = d.act;
  s.sliding_window = d.window;
  s.sliding_layers = d.sliding;
  s.attn_logit_softcapping = d.attn_cap;
  s.final_logit_softcapping = d.final_cap;
  s.attention_bias = s.qkv_bias = s.o_bias = d.bias;
  s.max_position_embeddings = dr.positive({"max_position_embeddings"}, 8192);
  s.t5gemma_enc_vocab = e.vocab;
  s.t5gemma_enc_hidden = e.hidden;
  s.t5gemma_enc_intermediate = e.intermediate;
  s.t5gemma_enc_heads = e.heads;
  s.t5gemma_enc_kv_heads = e.kv;
  s.t5gemma_enc_head_dim = e.head_dim;
  s.t5gemma_enc_sliding_window = e.window;
  s.t5gemma_enc_sliding_layers = e.sliding;
  s.t5gemma_enc_act = e.act;
  s.t5gemma_enc_attn_softcap = e.attn_cap;
  s.t5gemma_enc_attention_bias = e.bias;
  // dropout_rate / attention_dropout: T5GemmaConfig's, copied over both module configs' own
  s.resid_dropout = s.embd_dropout = r.probability({"dropout_rate"}, 0.0);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  // generate(): decoder_input_ids start as [B, 1] (decoder_start_token_id, else bos_token_id: the decoder's 2);
  // eos_token_id (the top level's when given, else the decoder's, default 1) adds the min-length processors.
  s.generate_decoder_prompt = 1;
  s.generate_without_eos = r.present("eos_token_id") ? false
                           : r.explicit_null("eos_token_id") ? true
                                                             : dr.explicit_null("eos_token_id");
  return s;
}

}  // namespace memplan::hf
