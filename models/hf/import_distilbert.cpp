// DistilBertConfig (transformers 5.17 models/distilbert/configuration_distilbert.py) and what
// DistilBertForMaskedLM, DistilBertForSequenceClassification and DistilBertForTokenClassification read of it.
//
// Class defaults: vocab 30522, max_position_embeddings 512, sinusoidal_pos_embds False, n_layers 6, n_heads 12,
// dim 768, hidden_dim 3072, dropout 0.1, attention_dropout 0.1, activation "gelu", pad_token_id 0, tie True,
// seq_classif_dropout 0.2 (the sequence-classification head's dropout; qa_dropout belongs to a head not built).
// attribute_map: hidden_size -> dim, num_attention_heads -> n_heads, num_hidden_layers -> n_layers (either
// spelling is read). dim must be a multiple of n_heads (DistilBertSelfAttention raises otherwise).
// sinusoidal_pos_embds only changes the position table's initial values (_init_weights copies the sines into the
// still trainable weight).
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_distilbert(const ConfigReader& r) {
  TransformerSpec s;
  s.family = TransformerSpec::Family::bert;  // an encoder: non-causal attention, training only
  s.vocab_size = r.positive({"vocab_size"}, 30522);
  s.hidden_size = r.positive({"dim", "hidden_size"}, 768);
  s.num_layers = r.positive({"n_layers", "num_hidden_layers"}, 6, kMaxLayers);
  s.num_heads = r.positive({"n_heads", "num_attention_heads"}, 12);
  s.num_kv_heads = s.num_heads;
  if (s.hidden_size % s.num_heads != 0) {
    const char* key = r.present("n_heads") || !r.present("num_attention_heads") ? "n_heads" : "num_attention_heads";
    throw InputError(r.name(key), std::to_string(s.num_heads),
                     "must divide dim (" + std::to_string(s.hidden_size) + ")");
  }
  s.head_dim = s.hidden_size / s.num_heads;
  s.intermediate_size = r.positive({"hidden_dim"}, 4 * 768);
  s.max_position_embeddings = r.positive({"max_position_embeddings"}, 512);
  s.type_vocab_size = 0;  // no token-type embeddings
  s.resid_dropout = r.probability({"dropout"}, 0.1);  // FFN dropout
  s.embd_dropout = s.resid_dropout;                   // Embeddings.dropout uses config.dropout too
  s.attn_dropout = r.probability({"attention_dropout"}, 0.1);
  s.hidden_act = r.string({"activation"}, "gelu");
  if (s.hidden_act != "gelu")
    throw InputError(r.name("activation"), "\"" + s.hidden_act + "\"",
                     "is not modelled (distilbert is modelled with gelu, in the FFN and the MLM head)");
  r.boolean({"sinusoidal_pos_embds"}, false);  // read for its type only: initialisation, no memory effect
  check_padding_idx(r, s.vocab_size);
  refuse_chunked_feed_forward(r);
  s.tie_word_embeddings = r.boolean({"tie_word_embeddings"}, true);
  // DistilBertForSequenceClassification's nn.Dropout(seq_classif_dropout) after pre_classifier and ReLU;
  // DistilBertForTokenClassification's nn.Dropout(config.dropout) over the last hidden states.
  s.seq_cls_dropout = r.probability({"seq_classif_dropout"}, 0.2);
  s.token_cls_dropout = s.resid_dropout;
  read_problem_type(r, s);
  s.attention_bias = s.qkv_bias = s.o_bias = s.mlp_bias = true;
  return s;
}

}  // namespace memplan::hf
