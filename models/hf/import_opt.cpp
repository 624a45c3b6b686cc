// OPTConfig (transformers 5.17 models/opt/configuration_opt.py) and what OPTDecoder / OPTAttention read of it.
//
// Class defaults: vocab 50272, hidden 768, 12 layers, ffn_dim 3072, 12 heads, max_position_embeddings 2048
// (the position table has 2 more rows: ids are offset by 2), do_layer_norm_before True,
// _remove_final_layer_norm False, word_embed_proj_dim None (=> hidden), dropout 0.1, attention_dropout 0,
// relu, layerdrop 0, enable_bias True, layer_norm_elementwise_affine True, tie True. OPTAttention requires
// hidden % heads == 0 and has no GQA.
#include "engine/arch/decoders/parts/phi_parts.h"
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_opt(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 50272);
  s.hidden_size = r.positive({"hidden_size"}, 768);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.intermediate_size = r.positive({"ffn_dim"}, 3072);
  s.num_heads = r.positive({"num_attention_heads"}, 12);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 2048);
  s.learned_positions = true;
  s.word_embed_proj_dim = r.explicit_null("word_embed_proj_dim")
                              ? s.hidden_size
                              : r.positive({"word_embed_proj_dim"}, s.hidden_size);
  s.post_layer_norm = !r.boolean({"do_layer_norm_before"}, true);
  s.no_final_norm = s.post_layer_norm || r.boolean({"_remove_final_layer_norm"}, false);
  s.norm_affine = r.boolean({"layer_norm_elementwise_affine"}, true);
  s.resid_dropout = r.probability({"dropout"}, 0.1);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  s.hidden_act = r.string({"activation_function"}, "relu");
  if (s.hidden_act != "relu" && !is_single_kernel_activation(s.hidden_act))
    throw InputError(r.name("activation_function"), "\"" + s.hidden_act + "\"",
                     "is not modelled (relu, gelu, gelu_pytorch_tanh, silu)");
  if (r.probability({"layerdrop"}, 0.0) > 0.0)
    throw InputError(r.name("layerdrop"), dump_short(*r.raw("layerdrop")),
                     "LayerDrop skips random layers each step: not modelled (0 only)");
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = r.boolean({"enable_bias"}, true);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  return s;
}

}  // namespace memplan::hf
