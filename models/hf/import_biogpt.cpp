// BioGptConfig (transformers models/biogpt/configuration_biogpt.py) and what BioGptModel / BioGptDecoderLayer read
// of it.
//
// Class defaults: vocab 42384, hidden 1024, 24 layers, 16 heads, intermediate 4096, gelu, hidden_dropout_prob 0.1
// (embeddings and every residual branch), attention_probs_dropout_prob 0.1, activation_dropout 0.0,
// max_position_embeddings 1024 (the table has 2 more rows: OPT's offset), layer_norm_eps 1e-12, scale_embedding
// True (embed_scale = sqrt(hidden), else 1.0: the product runs either way), layerdrop 0.0, pad 1, tied
// output_projection. BartAttention requires hidden % heads == 0.
// Refused, naming the field: layerdrop > 0 (each training step skips random layers: no single step to replay),
// activations other than the single-kernel ones and gelu_new.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_biogpt(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 42384);
  s.hidden_size = r.positive({"hidden_size"}, 1024);
  s.num_layers = r.positive({"num_hidden_layers"}, 24, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 16);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  s.intermediate_size = r.positive({"intermediate_size"}, 4096);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 1024);
  s.learned_positions = true;
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu_new" && !is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"",
                     "is not modelled (gelu, gelu_new, gelu_pytorch_tanh, silu, relu)");
  s.resid_dropout = s.embd_dropout = r.probability({"hidden_dropout_prob"}, 0.1);
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.1);
  s.activation_dropout = r.probability({"activation_dropout"}, 0.0);
  s.scale_embedding = r.boolean({"scale_embedding"}, true);
  if (r.probability({"layerdrop"}, 0.0) > 0.0)
    throw InputError(r.name("layerdrop"), dump_short(*r.raw("layerdrop")),
                     "LayerDrop skips random layers each step: not modelled (0 only)");
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;  // BartAttention and fc1 / fc2 have biases
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  return s;
}

}  // namespace memplan::hf
