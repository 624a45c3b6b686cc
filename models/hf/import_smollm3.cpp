// SmolLM3Config (transformers 5.17 models/smollm3/configuration_smollm3.py) and what SmolLM3Model /
// SmolLM3Attention read of it.
//
// Defaults: vocab 128256, hidden 2048, intermediate 11008, 36 layers, 16 heads, 4 kv heads (None => heads),
// silu, max_position_embeddings 32768, attention_bias / mlp_bias False, attention_dropout 0, tie True,
// use_sliding_window False, sliding_window None. No head_dim field: the attention reads getattr(config,
// "head_dim", hidden // heads), so a config.json key sets it. __post_init__ derives
//   no_rope_layers (None) = [int((i + 1) % no_rope_layer_interval != 0)], interval 4: every 4th layer is NoPE;
//   layer_types (None) = "sliding_attention" where use_sliding_window, sliding_window is set and the layer is
//   NoPE, else "full_attention".
// A "sliding_attention" layer gets create_sliding_window_causal_mask (which needs config.sliding_window) and a
// DynamicSlidingWindowLayer in the cache.
#include <optional>
#include <vector>

#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_smollm3(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {128256, 2048, 11008, 36, 16, 4});
  if (r.explicit_null("num_key_value_heads")) s.num_kv_heads = s.num_heads;  // __post_init__: None => heads
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 32768);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "smollm3 is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  s.mlp_bias = r.boolean({"mlp_bias"}, false);

  const size_t L = static_cast<size_t>(s.num_layers);
  s.rope_layers.assign(L, 1);
  if (const json* nr = r.raw("no_rope_layers")) {
    // SmolLM3Attention indexes config.no_rope_layers[layer_idx]: at least one entry per layer, each an int.
    if (!nr->is_array() || nr->size() < L)
      throw InputError(r.name("no_rope_layers"), dump_short(*nr),
                       "must be a list of at least num_hidden_layers (" + std::to_string(L) + ") integers");
    for (size_t i = 0; i < L; ++i) {
      const json& e = (*nr)[i];
      if (!e.is_number_integer())
        throw InputError(r.name("no_rope_layers[" + std::to_string(i) + "]"), dump_short(e),
                         "must be an integer (1: rotary, 0: NoPE)");
      s.rope_layers[i] = e.get<int64_t>() != 0 ? 1 : 0;
    }
  } else {
    const int64_t interval = r.positive({"no_rope_layer_interval"}, 4);
    for (size_t i = 0; i < L; ++i) s.rope_layers[i] = (static_cast<int64_t>(i) + 1) % interval != 0 ? 1 : 0;
  }

  const bool use_sliding = r.boolean({"use_sliding_window"}, false);
  const std::optional<int64_t> window = r.opt_positive({"sliding_window"});
  std::vector<uint8_t> sliding(L, 0);
  if (const json* lt = r.raw("layer_types")) {
    if (!lt->is_array() || lt->size() != L)
      throw InputError(r.name("layer_types"), dump_short(*lt),
                       "must be a list of num_hidden_layers (" + std::to_string(L) + ") layer types");
    for (size_t i = 0; i < L; ++i) {
      const json& t = (*lt)[i];
      if (t == "sliding_attention")
        sliding[i] = 1;
      else if (t != "full_attention")
        throw InputError(r.name("layer_types[" + std::to_string(i) + "]"), dump_short(t),
                         "must be \"sliding_attention\" or \"full_attention\"");
    }
  } else if (use_sliding && window) {
    for (size_t i = 0; i < L; ++i) sliding[i] = s.rope_layers[i] ? 0 : 1;
  }
  bool any_sliding = false;
  for (uint8_t x : sliding) any_sliding = any_sliding || x != 0;
  if (any_sliding) {
    if (!window)  // create_sliding_window_causal_mask raises without config.sliding_window
      throw InputError(r.name("sliding_window"), "null",
                       "must be set when layer_types has \"sliding_attention\" layers");
    s.sliding_window = *window;
    s.sliding_layers = std::move(sliding);
  }
  return s;
}

}  // namespace memplan::hf
