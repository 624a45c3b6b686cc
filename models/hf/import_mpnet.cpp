// MPNetConfig (transformers 5.17 models/mpnet/configuration_mpnet.py) and what MPNetForMaskedLM,
// MPNetForSequenceClassification and MPNetForTokenClassification read of it (builder:
// engine/arch/encoders/mpnet.cpp).
//
// Class defaults: vocab 30527, hidden 768, 12 layers, 12 heads, intermediate 3072, hidden_act "gelu",
// hidden_dropout_prob 0.1, attention_probs_dropout_prob 0.1, max_position_embeddings 512, layer_norm_eps 1e-12,
// relative_attention_num_buckets 32, pad_token_id 1, tie_word_embeddings True. The published checkpoints
// (microsoft/mpnet-base, sentence-transformers/all-mpnet-base-v2) set max_position_embeddings 514.
// MPNetEmbeddings' padding index is fixed at 1 (not pad_token_id), so position ids start at 2 and a sequence holds
// max_position_embeddings - 2 tokens. Both heads' dropouts are hidden_dropout_prob (no classifier_dropout).
// Refused, naming the field: hidden_act other than gelu; hidden_size not a multiple of num_attention_heads
// (MPNetSelfAttention raises); relative_attention_num_buckets below 32 (compute_position_bias always buckets into
// 32, indexing rows up to 31 of the table); tie_word_embeddings false (the MLM decoder's own weight and the
// lm_head.bias tie are not modelled); vocab_size or max_position_embeddings too small for the padding index 1.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_mpnet(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder: non-causal attention, learned positions, training only
  s.vocab_size = r.positive({"vocab_size"}, 30527);
  s.hidden_size = r.positive({"hidden_size"}, 768);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 12);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  s.intermediate_size = r.positive({"intermediate_size"}, 3072);
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "mpnet is modelled with gelu");
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.1);
  s.embd_dropout = s.resid_dropout;  // MPNetEmbeddings applies hidden_dropout_prob
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.1);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 512);
  // nn.Embedding(..., padding_idx=1) asserts 1 < num_embeddings; positions 2.. must leave room for one token.
  if (s.vocab_size < 2)
    throw InputError(r.name("vocab_size"), std::to_string(s.vocab_size),
                     "must be at least 2 (MPNetEmbeddings' padding index is 1)");
  if (s.max_position_embeddings < 3)
    throw InputError(r.name("max_position_embeddings"), std::to_string(s.max_position_embeddings),
                     "leaves no position: MPNet's positions start at 2 (padding index 1 + 1)");
  s.position_id_offset = 2;
  s.relative_attention_num_buckets = r.positive({"relative_attention_num_buckets"}, 32);
  if (s.relative_attention_num_buckets < 32)
    throw InputError(r.name("relative_attention_num_buckets"), std::to_string(s.relative_attention_num_buckets),
                     "must be at least 32: MPNetEncoder.compute_position_bias always computes 32 buckets");
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  if (!s.tie_word_embeddings)
    throw InputError(r.name("tie_word_embeddings"), "false",
                     "an MLM decoder with its own weight is not modelled for mpnet (true only)");
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
  // MPNetClassificationHead and MPNetForTokenClassification: nn.Dropout(hidden_dropout_prob).
  s.seq_cls_dropout = s.token_cls_dropout = s.resid_dropout;
  read_problem_type(r, s);
  return s;
}

}  // namespace memplan::hf
