// T5Config (transformers 5.17 models/t5/configuration_t5.py), the model of T5ForConditionalGeneration.
// Class defaults: vocab 32128, d_model 512, d_kv 64, d_ff 2048, num_layers 6, num_decoder_layers None (->
// num_layers), num_heads 8, relative_attention_num_buckets 32, relative_attention_max_distance 128,
// dropout_rate 0.1, feed_forward_proj "relu". attribute_map: hidden_size -> d_model, num_attention_heads ->
// num_heads, num_hidden_layers -> num_layers, head_dim -> d_kv.
// T5Config.__post_init__: dense_act_fn is the part of feed_forward_proj after "gated-" ("gated-gelu" means
// gelu_new), is_gated_act whether it starts with "gated"; scale_decoder_outputs = (tie_word_embeddings given
// and not False); tie_word_embeddings is then forced True, so lm_head always shares the embedding.
// validate_architecture: feed_forward_proj is "<act>" or "gated-<act>".
#include "models/hf/import_t5.h"

namespace memplan::hf {

namespace {
// The activations the T5 builder models (engine/arch/seq2seq/t5.cpp t5_act): nn.ReLU, NewGELUActivation (the tanh
// formula in Python), F.gelu, GELUTanh (F.gelu approximate "tanh"), SiLU.
bool modelled_act(const std::string& a) {
  for (const char* m : {"relu", "gelu_new", "gelu", "gelu_pytorch_tanh", "silu", "swish"})
    if (a == m) return true;
  return false;
}
}  // namespace

// The keys T5Config, MT5Config and UMT5Config share (models/hf/import_t5.h).
void read_t5_stacks(const ConfigReader& r, TransformerSpec& s, const T5Defaults& d, const std::string& type) {
  s.family = TransformerSpec::Family::t5;
  s.vocab_size = r.positive({"vocab_size"}, d.vocab);
  s.hidden_size = r.positive({"d_model", "hidden_size"}, 512);
  s.head_dim = r.positive({"d_kv", "head_dim"}, 64);
  s.intermediate_size = r.positive({"d_ff"}, d.d_ff);
  s.num_layers = r.positive({"num_layers", "num_hidden_layers"}, d.layers, kMaxLayers);
  s.num_decoder_layers = r.positive({"num_decoder_layers"}, s.num_layers, kMaxLayers);
  s.num_heads = r.positive({"num_heads", "num_attention_heads"}, d.heads);
  s.num_kv_heads = s.num_heads;
  s.relative_attention_num_buckets = r.positive({"relative_attention_num_buckets"}, 32);
  (void)r.positive({"relative_attention_max_distance"}, 128);  // bucket boundaries only: no memory effect
  const double p = r.probability({"dropout_rate"}, 0.1);
  s.resid_dropout = s.attn_dropout = s.embd_dropout = p;
  const std::string ffp = r.string({"feed_forward_proj"}, d.feed_forward_proj);
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
  if (!modelled_act(s.hidden_act))
    throw InputError("config.feed_forward_proj", "\"" + ffp + "\"",
                     "activation \"" + s.hidden_act + "\" is not modelled for " + type +
                         " (relu, gelu_new, gelu, gelu_pytorch_tanh, silu)");
}

TransformerSpec import_t5(const ConfigReader& r) {
  TransformerSpec s;
  read_t5_stacks(r, s, {32128, 2048, 6, 8, "relu"}, "t5");
  s.scale_decoder_outputs = r.boolean({"tie_word_embeddings"}, true);
  s.tie_word_embeddings = true;
  // T5 has relative position buckets, no position table: n_positions is informational only.
  s.max_position_embeddings = r.positive({"n_positions"}, 512);
  return s;
}

}  // namespace memplan::hf
