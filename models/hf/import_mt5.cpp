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
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_mt5(const ConfigReader& r, const std::string& type) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::t5;
  s.vocab_size = r.positive({"vocab_size"}, 250112);
  s.hidden_size = r.positive({"d_model", "hidden_size"}, 512);
  s.head_dim = r.positive({"d_kv", "head_dim"}, 64);
  s.intermediate_size = r.positive({"d_ff"}, 1024);
  s.num_layers = r.positive({"num_layers", "num_hidden_layers"}, 8, kMaxLayers);
  s.num_decoder_layers = r.positive({"num_decoder_layers"}, s.num_layers, kMaxLayers);
  s.num_heads = r.positive({"num_heads", "num_attention_heads"}, 6);
  s.num_kv_heads = s.num_heads;
  s.relative_attention_num_buckets = r.positive({"relative_attention_num_buckets"}, 32);
  (void)r.positive({"relative_attention_max_distance"}, 128);  // bucket boundaries only: no memory effect
  const double p = r.probability({"dropout_rate"}, 0.1);
  s.resid_dropout = s.attn_dropout = s.embd_dropout = p;
  const std::string ffp = r.string({"feed_forward_proj"}, "gated-gelu");
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t dash = ffp.find('-', start);
    parts.push_back(ffp.substr(start, dash == std::string::npos ? std::string::npos : dash - start));
    if (dash == std::string::npos) break;
    start = dash + 1;
  }
  if ((parts.size() > 1 && parts[0] != "gated") || parts.size() > 2)
    throw InputError("config.feed_forward_proj", "\"" + ffp + "\"", "must be \"<act>\" or \"gated-<act>\"");
  s.gated_ffn = parts[0] == "gated" && parts.size() == 2;
  s.hidden_act = ffp == "gated-gelu" ? "gelu_new" : parts.back();
  bool modelled = false;
  for (const char* m : {"relu", "gelu_new", "gelu", "gelu_pytorch_tanh", "silu", "swish"})
    modelled = modelled || s.hidden_act == m;
  if (!modelled)
    throw InputError("config.feed_forward_proj", "\"" + ffp + "\"",
                     "activation \"" + s.hidden_act + "\" is not modelled for " + type +
                         " (relu, gelu_new, gelu, gelu_pytorch_tanh, silu)");
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
