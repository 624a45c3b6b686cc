// ElectraConfig (transformers 5.17 models/electra/configuration_electra.py) and what ElectraForMaskedLM,
// ElectraForSequenceClassification and ElectraForTokenClassification read of it (builder:
// engine/arch/encoders/electra.cpp).
//
// Class defaults (the small generator's shape): vocab 30522, embedding_size 128, hidden 256, 12 layers, 4 heads,
// intermediate 1024, hidden_act "gelu", hidden_dropout_prob 0.1, attention_probs_dropout_prob 0.1,
// max_position_embeddings 512, type_vocab_size 2, layer_norm_eps 1e-12, pad_token_id 0, classifier_dropout None
// (-> hidden_dropout_prob, both heads), tie True. summary_* are ElectraForMultipleChoice's (not built).
// Refused, naming the field: hidden_act other than gelu (the encoder and the generator head are modelled with
// gelu), hidden_size not a multiple of num_attention_heads (ElectraSelfAttention then makes an all_head_size
// narrower than hidden_size, which ElectraSelfOutput's dense cannot take), chunk_size_feed_forward > 0,
// is_decoder / add_cross_attention true, a pad_token_id outside the word embedding.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_electra(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder: non-causal attention, training only
  s.vocab_size = r.positive({"vocab_size"}, 30522);
  s.embedding_size = r.positive({"embedding_size"}, 128);
  s.hidden_size = r.positive({"hidden_size"}, 256);
  s.num_layers = r.positive({"num_hidden_layers"}, 12, kMaxLayers);
  s.num_heads = r.positive({"num_attention_heads"}, 4);
  s.num_kv_heads = s.num_heads;
  s.head_dim = head_dim_from_hidden(r, s.hidden_size, s.num_heads, "num_attention_heads", "hidden_size");
  s.intermediate_size = r.positive({"intermediate_size"}, 1024);
  s.hidden_act = r.string({"hidden_act"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "electra is modelled with gelu");
  s.resid_dropout = r.probability({"hidden_dropout_prob"}, 0.1);
  s.embd_dropout = s.resid_dropout;  // ElectraEmbeddings applies hidden_dropout_prob
  s.attn_dropout = r.probability({"attention_probs_dropout_prob"}, 0.1);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 512);
  s.type_vocab_size = r.positive({"type_vocab_size"}, 2);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
  check_padding_idx(r, s.vocab_size);
  refuse_chunked_feed_forward(r);
  for (const char* key : {"is_decoder", "add_cross_attention"})
    if (r.boolean({key}, false))
      throw InputError(r.name(key), "true", "electra is modelled as a bidirectional encoder (false only)");
  // ElectraClassificationHead and ElectraForTokenClassification: nn.Dropout(classifier_dropout, None ->
  // hidden_dropout_prob); the sequence head applies it twice.
  s.seq_cls_dropout = s.token_cls_dropout = r.opt_probability({"classifier_dropout"}).value_or(s.resid_dropout);
  read_problem_type(r, s);
  return s;
}

}  // namespace memplan::hf
