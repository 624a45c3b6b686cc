// NemotronConfig (transformers 5.17 models/nemotron/configuration_nemotron.py) and what NemotronAttention /
// NemotronRotaryEmbedding / NemotronMLP read of it (models/nemotron/modeling_nemotron.py).
//
// Class defaults: vocab 256000, hidden 6144, intermediate 24576, 32 layers, 48 heads, head_dim None
// (=> hidden // heads in __post_init__, floor division: heads need not divide hidden), num_key_value_heads None
// (nothing fills it and NemotronAttention divides by it: absent or null is refused), relu2, norm_eps 1e-5,
// max_position_embeddings 4096, tie False, attention_bias False (q / k / v / o), mlp_bias False (up / down),
// attention_dropout 0.0; partial_rotary_factor 0.5 (__post_init__'s setdefault; a rope dict's value wins).
// No sliding window.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_nemotron(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 256000);
  s.hidden_size = r.positive({"hidden_size"}, 6144);
  s.intermediate_size = r.positive({"intermediate_size"}, 24576);
  s.num_layers = r.positive({"num_hidden_layers"}, 32, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 48);
  const auto kv = r.opt_positive({"num_key_value_heads"});
  if (!kv)
    throw InputError(r.name("num_key_value_heads"), r.explicit_null("num_key_value_heads") ? "null" : "absent",
                     "must be a positive integer (NemotronConfig leaves it None and NemotronAttention divides by it)");
  s.num_kv_heads = *kv;
  check_kv_heads(r, s);
  if (auto hd = r.opt_positive({"head_dim"})) {
    s.head_dim = *hd;
  } else {
    s.head_dim = s.hidden_size / s.num_heads;
    if (s.head_dim == 0)
      throw InputError(r.name("num_attention_heads"), std::to_string(s.num_heads),
                       "exceeds hidden_size (" + std::to_string(s.hidden_size) + "): head_dim = hidden // heads is 0");
  }
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 4096);
  s.hidden_act = r.string({"hidden_act"}, "relu2");
  if (s.hidden_act != "relu2" && !is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for nemotron (relu2, relu, silu, swish, gelu, gelu_pytorch_tanh are)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = s.qkv_bias = s.o_bias = r.boolean({"attention_bias"}, false);
  s.mlp_bias = r.boolean({"mlp_bias"}, false);
  read_partial_rope(r, "nemotron", s);
  return s;
}

}  // namespace memplan::hf
