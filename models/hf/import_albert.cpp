// AlbertConfig (transformers 5.17 models/albert/configuration_albert.py) and what AlbertForMaskedLM,
// AlbertForSequenceClassification and AlbertForTokenClassification read of it (builder:
// engine/arch/encoders/albert.cpp).
//
// Class defaults (ALBERT-xxlarge's shape): vocab 30000, embedding_size 128, hidden 4096, 12 layers,
// num_hidden_groups 1, 64 heads, intermediate 16384, inner_group_num 1, hidden_act "gelu_new",
// hidden_dropout_prob 0.0, attention_probs_dropout_prob 0.0, max_position_embeddings 512, type_vocab_size 2,
// layer_norm_eps 1e-12, classifier_dropout_prob 0.1 (both classification heads), pad_token_id 0,
// tie_word_embeddings True.
// Refused, naming the field: hidden_act other than gelu_new / gelu (the layers' activation and the MLM head's),
// hidden_size not a multiple of num_attention_heads (AlbertAttention then makes an all_head_size narrower than
// hidden_size, which its dense cannot take), num_hidden_groups above num_hidden_layers (a group no layer runs:
// parameters without gradients), more layer applications than the layer limit, chunk_size_feed_forward > 0,
// tie_word_embeddings false, a pad_token_id outside the word embedding.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_albert(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder: non-causal attention, training only
  s.vocab_size = r.positive({"vocab_size"}, 30000);
  s.embedding_size = r.positive({"embedding_size"}, 128);
  s.hidden_size = r.positive({"hidden_size"}, 4096);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.albert_num_hidden_groups = r.positive({"num_hidden_groups"}, 1, kMaxLayers);
  s.albert_inner_group_num = r.positive({"inner_group_num"}, 1, kMaxLayers);
  // AlbertTransformer.forward: group int(i / (num_hidden_layers / num_hidden_groups)) for layer i; with more
  // groups than layers some group never runs and its parameters get no gradient (not modelled).
  if (s.albert_num_hidden_groups > s.num_layers)
    throw InputError(r.name("num_hidden_groups"), std::to_string(s.albert_num_hidden_groups),
                     "must be at most num_hidden_layers (" + std::to_string(s.num_layers) +
                         "): a group no layer runs is not modelled");
  // Every layer application is a block of the graph; the parameter sets are num_hidden_groups * inner_group_num.
  if (s.albert_inner_group_num > kMaxLayers / s.num_layers)
    throw InputError(r.name("inner_group_num"), std::to_string(s.albert_inner_group_num),
                     "num_hidden_layers * inner_group_num exceeds the limit of " + std::to_string(kMaxLayers) +
                         " layer applications");
  s.num_heads = r.positive({"num_attention_heads"}, 64);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  s.intermediate_size = r.positive({"intermediate_size"}, 16384);
  s.hidden_act = r.string({"hidden_act"}, "gelu_new");
  if (s.hidden_act != "gelu_new" && s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "albert is modelled with gelu_new or gelu");
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.0);
  s.embd_dropout = s.resid_dropout;  // AlbertEmbeddings applies hidden_dropout_prob
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.0);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 512);
  s.type_vocab_size = r.positive({"type_vocab_size"}, 2);
  // AlbertForMaskedLM's _tied_weights_keys tie the decoder's weight to the word embeddings and its bias to
  // predictions.bias; an untied head is not modelled.
  if (!r.boolean({"tie_word_embeddings"}, true))
    throw InputError(r.name("tie_word_embeddings"), "false", "albert is modelled with the tied MLM decoder (true only)");
  s.tie_word_embeddings = true;
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
  check_padding_idx(r, s.vocab_size);
  refuse_chunked_feed_forward(r);
  // AlbertForSequenceClassification: nn.Dropout(classifier_dropout_prob) on the pooled output;
  // AlbertForTokenClassification: classifier_dropout_prob (None -> hidden_dropout_prob) on every position.
  s.seq_cls_dropout = s.token_cls_dropout = r.opt_probability({"classifier_dropout_prob"}).value_or(0.1);
  read_problem_type(r, s);
  return s;
}

}  // namespace memplan::hf
