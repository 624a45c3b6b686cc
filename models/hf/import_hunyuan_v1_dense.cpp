// HunYuanDenseV1Config (transformers 5.17 models/hunyuan_v1_dense/configuration_hunyuan_v1_dense.py) and the
// shapes the modeling code derives from it (models/hunyuan_v1_dense/modeling_hunyuan_v1_dense.py).
//
// Defaults: vocab 290943, hidden 4096, intermediate 11008, 32 layers, 32 heads, num_key_value_heads None =>
// heads, hidden_act "silu" (ACT2FN: the single-kernel activations are modelled), max_position_embeddings 2048,
// tie False, attention_bias False (q / k / v / o), attention_dropout 0, no MLP biases. head_dim defaults to None
// and the attention reads getattr(config, "head_dim", ...), which then gives None (the module cannot be built):
// an absent head_dim is taken as hidden // heads, the only value a model that builds can have. The q / k
// RMSNorms are always applied (the hub checkpoints' use_qk_norm is not read by transformers 5.17); the Tencent
// configs' MoE / CLA keys (num_experts, use_cla, ...) are not read by the dense class either. rope_parameters
// (default, dynamic with or without alpha, ...) changes only the [head_dim / 2] inverse frequencies.
#include "models/hf_config_reader.h"

#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan::hf {

TransformerSpec import_hunyuan_v1_dense(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {290943, 4096, 11008, 32, 32});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.hidden_act = r.string({"hidden_act"}, "silu");
  if (!is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "hunyuan_v1_dense is modelled with silu, swish, gelu, gelu_pytorch_tanh or relu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  return s;
}

}  // namespace memplan::hf
