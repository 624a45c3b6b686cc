// Exaone4Config (transformers 5.17 models/exaone4/configuration_exaone4.py) and the shapes the modeling code
// derives from it (models/exaone4/modeling_exaone4.py).
//
// Defaults: vocab 102400, hidden 4096, intermediate 16384, 32 layers, 32 heads, num_key_value_heads 32 (null =>
// heads), head_dim: no class field, Exaone4Attention reads getattr(config, "head_dim", hidden // heads), silu,
// max_position_embeddings 2048, tie False, attention_dropout 0, no biases, sliding_window 4096,
// sliding_window_pattern 4, layer_types None.
// Layer types (__post_init__): sliding_window None sets the pattern to 0; layer_types None becomes
// ["sliding_attention" if (i + 1) % sliding_window_pattern != 0 else "full_attention"], which Python can only
// evaluate for an integer pattern other than 0 (a string pattern or a None window without layer_types raises
// there, and is refused here naming the field). With a window set, full-attention layers take no rotary
// embedding (engine/arch/decoders/dense/exaone4.cpp); a None window (spec sliding_window 0) rotates every layer and is accepted
// only when no layer is a sliding one.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_exaone4(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 102400);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.intermediate_size = r.positive({"intermediate_size"}, 16384);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 32);
  s.num_kv_heads = r.explicit_null("num_key_value_heads") ? s.num_heads : r.positive({"num_key_value_heads"}, 32);
  check_kv_heads(r, s);
  if (auto hd = r.opt_positive({"head_dim"}))
    s.head_dim = *hd;
  else
    s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "exaone4 is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);

  const bool no_window = r.explicit_null("sliding_window");
  s.sliding_window = no_window ? 0 : r.positive({"sliding_window"}, 4096);
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (const json* lt = r.raw("layer_types")) {
    if (!lt->is_array() || static_cast<int64_t>(lt->size()) != s.num_layers)
      throw InputError(r.name("layer_types"), dump_short(*lt),
                       "must be a list of " + std::to_string(s.num_layers) + " layer types (num_hidden_layers)");
    for (size_t i = 0; i < lt->size(); ++i) {
      const json& t = (*lt)[i];
      const bool sliding = t.is_string() && t.get<std::string>() == "sliding_attention";
      if (!sliding && !(t.is_string() && t.get<std::string>() == "full_attention"))
        throw InputError(r.name("layer_types") + "[" + std::to_string(i) + "]", dump_short(t),
                         "must be \"sliding_attention\" or \"full_attention\"");
      if (sliding && no_window)
        throw InputError(r.name("sliding_window"), "null",
                         "layer_types has sliding_attention layers but no window (not modelled)");
      s.sliding_layers[i] = sliding ? 1 : 0;
    }
  } else {
    if (no_window)
      throw InputError(r.name("sliding_window"), "null",
                       "without layer_types, Exaone4Config divides by sliding_window_pattern 0 (set layer_types)");
    const json* pat = r.raw("sliding_window_pattern");
    int64_t pattern = 4;
    if (pat) {
      if (!pat->is_number_integer() || pat->get<int64_t>() <= 0)
        throw InputError(r.name("sliding_window_pattern"), dump_short(*pat),
                         "must be a positive integer when layer_types is not given (a pattern string is not "
                         "expanded by Exaone4Config)");
      pattern = pat->get<int64_t>();
    }
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers[static_cast<size_t>(i)] = (i + 1) % pattern != 0;
  }
  return s;
}

}  // namespace memplan::hf
