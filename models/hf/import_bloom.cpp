// BloomConfig (transformers 5.17 models/bloom/configuration_bloom.py) and what BloomAttention / BloomBlock
// (models/bloom/modeling_bloom.py) read of it.
//
// Class defaults: vocab 250880, hidden_size 64 (a legacy n_embed kwarg overrides it), n_layer 2, n_head 8
// (attribute_map: num_hidden_layers -> n_layer, num_attention_heads -> n_head), apply_residual_connection_post_
// layernorm False, hidden_dropout 0.0, attention_dropout 0.0, pretraining_tp 1, slow_but_exact False,
// tie_word_embeddings True. The MLP is 4 x hidden with bloom_gelu; every Linear has a bias; ALiBi, no positions.
// hidden % n_head == 0 (BloomAttention raises otherwise). Refused: slow_but_exact with pretraining_tp > 1 (the
// sliced dense / MLP loops are not modelled). SDPA is refused by the builder (transformers 5.17 has none for BLOOM).
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_bloom(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::llama;
  s.vocab_size = r.positive({"vocab_size"}, 250880);
  s.hidden_size = r.positive({"n_embed", "hidden_size"}, 64);
  s.num_layers = r.positive({"n_layer", "num_hidden_layers"}, 2, kMaxLayers);
  s.num_heads = r.positive({"n_head", "num_attention_heads"}, 8);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "n_head", "hidden_size");
  s.intermediate_size = 4 * s.hidden_size;
  // ALiBi: no position table and no length limit in the model (BloomConfig has no max_position_embeddings);
  // the engine's largest dimension stands for "unbounded".
  s.max_position_embeddings = kMaxDim;
  s.hidden_act = "bloom_gelu";
  s.residual_post_layernorm = r.boolean({"apply_residual_connection_post_layernorm"}, false);
  s.resid_dropout = r.probability({"hidden_dropout"}, 0.0);
  s.attn_dropout = r.probability({"attention_dropout"}, 0.0);
  const int64_t tp = r.positive({"pretraining_tp"}, 1);
  if (r.boolean({"slow_but_exact"}, false) && tp > 1)
    throw InputError(r.name("slow_but_exact"), "true",
                     "with pretraining_tp " + std::to_string(tp) +
                         " the sliced dense / MLP sums are not modelled (slow_but_exact false, or pretraining_tp 1)");
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  return s;
}

}  // namespace memplan::hf
