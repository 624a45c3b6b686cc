// Starcoder2Config (transformers 5.17 models/starcoder2/configuration_starcoder2.py) and the shapes
// Starcoder2Attention derives from it (models/starcoder2/modeling_starcoder2.py).
//
// Class defaults: vocab 49152, hidden 3072, intermediate 12288, 30 layers, 24 heads, 2 kv heads, hidden_act
// gelu_pytorch_tanh, max_position_embeddings 4096, sliding_window None (set => every layer slides, mask and
// cache), attention_dropout / residual_dropout / embedding_dropout 0.0, use_bias true (every projection and
// the MLP), tie_word_embeddings true. head_dim: getattr(config, "head_dim", None) or hidden // heads.
// The rotary embedding covers the whole head (Starcoder2's apply_rotary_pos_emb has no partial form).
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_starcoder2(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 49152);
  s.hidden_size = r.positive({"hidden_size"}, 3072);
  s.intermediate_size = r.positive({"intermediate_size"}, 12288);
  s.num_layers = r.positive({"num_hidden_layers"}, 30, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 24);
  s.num_kv_heads = r.opt_positive({"num_key_value_heads"}).value_or(2);
  check_kv_heads(r, s);
  if (auto hd = r.opt_positive({"head_dim"}))
    s.head_dim = *hd;
  else
    s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 4096);
  s.hidden_act = r.string({"hidden_act"}, "gelu_pytorch_tanh");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "activation not modelled for starcoder2 (gelu_pytorch_tanh, gelu, silu, swish, relu are)");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.resid_dropout = r.probability({"residual_dropout"}, 0.0);
  s.embd_dropout = r.probability({"embedding_dropout"}, 0.0);
  s.attention_bias = r.boolean({"use_bias"}, true);
  s.qkv_bias = s.o_bias = s.mlp_bias = s.attention_bias;
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.sliding_window = r.explicit_null("sliding_window") ? 0 : r.non_negative({"sliding_window"}, 0);
  if (r.raw("layer_types"))
    throw InputError(r.name("layer_types"), dump_short(*r.raw("layer_types")),
                     "per-layer attention types are not modelled for starcoder2");
  return s;
}

}  // namespace memplan::hf
