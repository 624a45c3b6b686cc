// StableLmConfig (transformers 5.17 models/stablelm/configuration_stablelm.py) and what StableLmAttention /
// StableLmDecoderLayer read of it (models/stablelm/modeling_stablelm.py).
//
// Class defaults: vocab 50304, intermediate 6912, hidden 2560, 32 layers, 32 heads, 32 kv heads, silu,
// max_position_embeddings 4096, tie False, use_qkv_bias False, qk_layernorm False, use_parallel_residual False,
// hidden_dropout / attention_dropout 0.0; partial_rotary_factor 0.25 (__post_init__'s setdefault; a rope dict's
// value wins). StableLmAttention takes head_dim = hidden // heads and raises unless heads divide hidden, so a
// head_dim key that disagrees is refused. o_proj and the MLP have no biases. No sliding window.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_stablelm(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {50304, 2560, 6912, 32, 32, 32});
  if (const int64_t derived = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
      s.head_dim != derived)
    throw InputError(r.name("head_dim"), std::to_string(s.head_dim),
                     "must equal hidden_size / num_attention_heads (" + std::to_string(derived) +
                         "): StableLmAttention derives its heads from hidden_size");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 4096);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (s.hidden_act != "silu" && s.hidden_act != "swish")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "stablelm is modelled with silu");
  s.resid_dropout = r.probability({"hidden_dropout"}, 0.0);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.qkv_bias = r.boolean({"use_qkv_bias"}, false);
  s.attention_bias = s.qkv_bias;
  s.qk_layernorm = r.boolean({"qk_layernorm"}, false);
  s.parallel_residual = r.boolean({"use_parallel_residual"}, false);
  std::string key;
  const double factor = partial_rotary_factor(r, 0.25, key);
  s.rotary_dim = rotary_dim_from_factor(r, key, factor, s.head_dim);
  return s;
}

}  // namespace memplan::hf
