// GPTNeoConfig (transformers 5.17 models/gpt_neo/configuration_gpt_neo.py) and what GPTNeoModel / GPTNeoBlock /
// GPTNeoSelfAttention read of it.
//
// Class defaults (EleutherAI/gpt-neo-1.3B): vocab 50257, max_position_embeddings 2048, hidden_size 2048,
// num_layers 24, num_heads 16, attention_types None (=> [[["global", "local"], 12]]), intermediate_size None
// (=> 4 * hidden_size), window_size 256, activation_function gelu_new, resid / embed / attention_dropout 0.0,
// tie_word_embeddings True. attribute_map: num_attention_heads -> num_heads, num_hidden_layers -> num_layers.
// __post_init__ expands attention_types ([[types, repeat], ...] => types repeated `repeat` times, in order) into
// attention_layers, and validate_architecture raises unless it has num_layers entries; GPTNeoAttention raises
// for a type other than "global" / "local"; GPTNeoSelfAttention requires hidden_size % num_heads == 0.
// Every attention keeps a bool [1, 1, max_position_embeddings, max_position_embeddings] mask buffer and slices it
// by key length, and wpe is learned: a sequence may not pass max_position_embeddings (estimate.cpp checks).
#include <algorithm>

#include "engine/arch/decoders/parts/phi_parts.h"
#include "engine/checked.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

namespace {

// config.attention_types expanded as GPTNeoConfig.expand_attention_types_params does: 1 for "local", 0 for
// "global", one entry per layer.
std::vector<uint8_t> read_attention_types(const ConfigReader& r, int64_t num_layers) {
  const std::string field = r.name("attention_types");
  const json* v = r.raw("attention_types");
  if (!v) {  // None => [[["global", "local"], 12]]: 24 entries, whatever num_layers is
    std::vector<uint8_t> layers;
    for (int i = 0; i < 12; ++i) layers.insert(layers.end(), {0, 1});
    if (static_cast<int64_t>(layers.size()) != num_layers)
      throw InputError(field, "absent",
                       "defaults to [[[\"global\", \"local\"], 12]] (24 layers), but config.num_layers is " +
                           std::to_string(num_layers) + " (validate_architecture raises): give attention_types");
    return layers;
  }
  const std::string shape_rule = "must be a list of [[\"global\" | \"local\", ...], repeat] pairs";
  if (!v->is_array()) throw InputError(field, dump_short(*v), shape_rule);
  std::vector<uint8_t> layers;
  for (const json& item : *v) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_array() || !item[1].is_number_integer() ||
        (item[1].is_number_unsigned() ? item[1].get<uint64_t>() > uint64_t(kMaxLayers) : item[1].get<int64_t>() < 0))
      throw InputError(field, dump_short(item), shape_rule + " (repeat a non-negative integer)");
    std::vector<uint8_t> types;
    for (const json& t : item[0]) {
      if (!t.is_string() || (t.get<std::string>() != "global" && t.get<std::string>() != "local"))
        throw InputError(field, dump_short(t),
                         "names an attention type other than \"global\" / \"local\" (GPTNeoAttention raises)");
      types.push_back(t.get<std::string>() == "local" ? 1 : 0);
    }
    const int64_t repeat = item[1].get<int64_t>();
    if (static_cast<int64_t>(layers.size()) + repeat * static_cast<int64_t>(types.size()) > kMaxLayers)
      throw InputError(field, dump_short(*v), "expands to more than " + std::to_string(kMaxLayers) + " layers");
    for (int64_t i = 0; i < repeat; ++i) layers.insert(layers.end(), types.begin(), types.end());
  }
  if (static_cast<int64_t>(layers.size()) != num_layers)
    throw InputError(field, dump_short(*v),
                     "expands to " + std::to_string(layers.size()) + " layer types, but config.num_layers is " +
                         std::to_string(num_layers) + " (validate_architecture raises)");
  return layers;
}

}  // namespace

TransformerSpec import_gpt_neo(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 50257);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.learned_positions = true;
  s.hidden_size = r.positive({"hidden_size"}, 2048);
  s.num_layers = r.positive({"num_layers", "num_hidden_layers"}, 24, kMaxLayers);
  s.num_heads = r.positive({"num_heads", "num_attention_heads"}, 16);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_heads", "hidden_size");
  s.intermediate_size =
      r.opt_positive({"intermediate_size"}).value_or(checked_mul(4, s.hidden_size, "config.hidden_size"));
  s.gpt_neo_local_layers = read_attention_types(r, s.num_layers);
  // tril(bias, -window_size): any integer is valid Python (a non-positive window masks every key of a local
  // layer; softmax then yields NaN, which costs no memory); the buffer's size does not depend on it.
  const json* w = r.raw("window_size");
  if (w && !w->is_number_integer()) throw InputError(r.name("window_size"), dump_short(*w), "must be an integer");
  s.gpt_neo_window_size = !w ? 256
                          : w->is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(w->get<uint64_t>(), kMaxDim))
                                                    : w->get<int64_t>();
  s.hidden_act = r.string({"activation_function"}, "gelu_new");
  if (s.hidden_act != "gelu_new" && !is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("activation_function"), "\"" + s.hidden_act + "\"",
                     "is not modelled (gelu_new, gelu, gelu_pytorch_tanh, silu, relu)");
  s.resid_dropout = r.probability({"resid_dropout"}, 0.0);
  s.embd_dropout = r.probability({"embed_dropout"}, 0.0);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = false;  // q / k / v_proj have no bias; out_proj has one (the builder registers it)
  s.mlp_bias = true;         // c_fc / c_proj
  return s;
}

}  // namespace memplan::hf
