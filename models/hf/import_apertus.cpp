// ApertusConfig (transformers 5.17 models/apertus/configuration_apertus.py) and the shapes the modeling code
// derives from it (models/apertus/modeling_apertus.py).
//
// Defaults: vocab 131072, hidden 4096, intermediate 14336, 32 layers, 32 heads, num_key_value_heads None =>
// heads, head_dim (not a class field: a config.json key becomes an attribute) else hidden // heads, hidden_act
// "xielu" (XIELUActivation; otherwise ACT2FN's single-kernel activations are modelled), max_position_embeddings
// 65536, tie False, attention_bias False (q / k / v / o), attention_dropout 0; the MLP (up, act, down) has no
// bias. rope_parameters (llama3 by default) changes only the [head_dim / 2] inverse frequencies.
#include "models/hf_config_reader.h"

#include "engine/arch/decoders/parts/phi_parts.h"

namespace memplan::hf {

TransformerSpec import_apertus(const ConfigReader& r) {
  TransformerSpec s = read_decoder_sizes(r, {131072, 4096, 14336, 32, 32});
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 65536);
  s.hidden_act = r.string({"hidden_act"}, "xielu");
  if (s.hidden_act != "xielu" && !is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "apertus is modelled with xielu, silu, swish, gelu, gelu_pytorch_tanh or relu");
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, false);
  s.attention_bias = r.boolean({"attention_bias"}, false);
  s.qkv_bias = s.o_bias = s.attention_bias;
  return s;
}

}  // namespace memplan::hf
