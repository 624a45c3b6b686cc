// CwmConfig (transformers 5.17 models/cwm/configuration_cwm.py) and what CwmAttention / CwmModel read of it
// (models/cwm/modeling_cwm.py).
//
// Class defaults (the 32B Code World Model's widths): vocab 128256, hidden 6144, intermediate 21504, 64 layers, 48
// heads, num_key_value_heads 8 (null => heads), head_dim 128 (null => hidden // heads), silu,
// max_position_embeddings 131072, untied, mlp_bias False, attention_dropout 0, sliding_window 8192, rope_parameters
// llama3 (theta 1e6, factor 16: inv_freq's values only), layer_types None => "full_attention" for i % 4 == 0, else
// "sliding_attention". CwmConfig has no attention_bias (CwmAttention's projections are bias-free): a config key of
// that name is unread.
// Refused, naming the field:
// - sliding_window null or 0 (`int(w) if w else None`): CwmModel.forward calls create_sliding_window_causal_mask on
//   every forward, which raises without a window;
// - num_attention_heads not dividing hidden_size (CwmConfig.validate_architecture, whatever head_dim says);
// - layer_types not a list of num_hidden_layers "sliding_attention" / "full_attention" entries;
// - rope types the engine does not model, hidden_act other than silu.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_cwm(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 128256);
  s.hidden_size = r.positive({"hidden_size"}, 6144);
  s.intermediate_size = r.positive({"intermediate_size"}, 21504);
  s.num_layers = r.positive({"num_hidden_layers"}, 64, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 48);
  if (s.hidden_size % s.num_heads != 0)  // CwmConfig.validate_architecture
    throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                     "must divide hidden_size (" + std::to_string(s.hidden_size) + ")");
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(r.explicit_null("num_key_value_heads") ? s.num_heads : 8);
  check_kv_heads(r, s);
  s.head_dim = r.opt_positive({"head_dim"}).value_or(r.explicit_null("head_dim") ? s.hidden_size / s.num_heads : 128);
  check_rotary_head_dim(r, s);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 131072);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "cwm is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  check_rope_type(r, "cwm");
  check_padding_idx(r, s.vocab_size);

  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null",
                     "CwmModel always builds the sliding-window mask, which raises without a window");
  s.sliding_window = r.positive({"sliding_window"}, 8192);
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (!read_sliding_layer_types(r, s))  // the class default: every fourth layer full, from layer 0
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers[static_cast<size_t>(i)] = i % 4 == 0 ? 0 : 1;
  return s;
}

}  // namespace memplan::hf
