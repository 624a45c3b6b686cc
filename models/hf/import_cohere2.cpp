// Cohere2Config (transformers 5.17 models/cohere2/configuration_cohere2.py) and what Cohere2Attention /
// Cohere2RotaryEmbedding read of it (models/cohere2/modeling_cohere2.py).
//
// Class defaults: vocab 256000, hidden 8192, intermediate 22528, 40 layers, 64 heads, num_key_value_heads None =>
// heads, silu, max_position_embeddings 8192, tie True, attention_bias False (q / k / v / o), attention_dropout 0,
// logit_scale 0.0625 (a Python float: no tensor size), sliding_window 4096, layer_types None.
// __post_init__ sets head_dim = hidden_size // num_attention_heads before PreTrainedConfig.__post_init__(**kwargs),
// which sets the remaining config.json keys as attributes: a head_dim key (the published configs carry one equal
// to hidden // heads) is what Cohere2Attention reads. layer_types None becomes ["sliding_attention" if (i + 1) % sliding_window_pattern else
// "full_attention"] with the sliding_window_pattern kwarg (default 4; an integer, else Python raises). No q / k
// norm (a use_qk_norm key is an unused attribute). A null sliding_window is refused: Cohere2Model.forward calls
// create_sliding_window_causal_mask on every forward, which raises without a window.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_cohere2(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 256000);
  s.hidden_size = r.positive({"hidden_size"}, 8192);
  s.intermediate_size = r.positive({"intermediate_size"}, 22528);
  s.num_layers = r.positive({"num_hidden_layers"}, 40, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 64);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(s.num_heads);
  check_kv_heads(r, s);
  s.head_dim = rotary_head_dim_floor(r, s);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 8192);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "cohere2 is modelled with silu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  if (const json* v = r.raw("logit_scale"); v && !v->is_number())
    throw InputError(r.name("logit_scale"), dump_short(*v), "must be a number");
  check_rope_type(r, "cohere2");

  if (r.explicit_null("sliding_window"))
    throw InputError(r.name("sliding_window"), "null",
                     "Cohere2Model always builds the sliding-window mask, which raises without a window");
  s.sliding_window = r.positive({"sliding_window"}, 4096);
  s.sliding_layers.assign(static_cast<size_t>(s.num_layers), 0);
  if (!read_sliding_layer_types(r, s)) {
    int64_t pattern = 4;
    if (const json* pat = r.raw("sliding_window_pattern")) {
      if (!pat->is_number_integer() || pat->get<int64_t>() <= 0)
        throw InputError(r.name("sliding_window_pattern"), dump_short(*pat),
                         "must be a positive integer when layer_types is not given");
      pattern = pat->get<int64_t>();
    }
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers[static_cast<size_t>(i)] = (i + 1) % pattern != 0;
  }
  return s;
}

}  // namespace memplan::hf
