// BertForMaskedLM (transformers 5.17 modeling_bert.py), training forward + masked-LM loss.
//   word + token_type embeddings, + position embeddings, LayerNorm, dropout
//   N x layer: LN(h + drop(dense(sdpa(q, k, v)))), then LN(h + drop(dense(gelu(dense(h)))))   (bert_parts.cpp)
//   head: dense -> gelu -> LayerNorm -> decoder (tied to word embeddings, own bias) -> cross entropy.
// BertForSequenceClassification / BertForTokenClassification (RunConfig::task) run the same model (with its pooler
// for seq_cls) and their own heads: engine/arch/encoders/heads_encoder.cpp. Task::feature (inference): BertModel
// with its pooler, both outputs returned.
// Inference (model.eval(), inference_mode): dropout is the identity, nothing is saved, no labels and no loss; the
// head's output is the forward's (forward_output).
#include "engine/arch/encoders/bert_parts.h"

namespace memplan {

void build_bert(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId word = b.param("embeddings.word_embeddings.weight", {V, H}, emb_train);
  // The MLM decoder's own weight, until tie_weights() (whole-run stream); the classification models have none.
  if (cfg.task == Task::lm) b.construction_temp(b.info(word).bytes);
  TensorId posw = b.param("embeddings.position_embeddings.weight", {s.max_position_embeddings, H}, emb_train);
  TensorId typew = b.param("embeddings.token_type_embeddings.weight", {s.type_vocab_size, H}, emb_train);
  TensorId eln_w = b.param("embeddings.LayerNorm.weight", {H}, emb_train);
  TensorId eln_b = b.param("embeddings.LayerNorm.bias", {H}, emb_train);
  TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);
  TensorId type_ids = b.generic({"expand", {}, {{{B, S}, DType::i64}}, {}, {}, {}, {}})[0];

  // inputs_embeds and token_type_embeddings stay bound until BertEmbeddings.forward returns.
  TensorId we = b.embedding(ids, word);
  b.hold(we);
  TensorId te = b.embedding(type_ids, typew);
  b.hold(te);
  TensorId e = b.add(we, te);
  // position_embeddings is a local until the embeddings return too. Held in inference only: in training the
  // [1, S, H] block's earlier release is what the measured rows were fitted with (its add saves nothing).
  const TensorId pe = b.embedding(b.input({1, S}, DType::i64), posw);
  if (!b.training()) b.hold(pe);
  e = b.add(e, pe);
  TensorId h = b.dropout(b.layer_norm(e, eln_w, eln_b), s.embd_dropout);
  b.drop(we);
  b.drop(te);
  if (!b.training()) b.drop(pe);
  const TensorId embedding_output = h;
  h = bert_encoder(b, s, h);
  if (cfg.task == Task::feature) {
    // AutoModel: BertModel(config) with its pooler; BaseModelOutputWithPooling(last_hidden_state, pooler_output).
    const BertLinear pooler = bert_linear(b, "pooler.dense", H, H, true);
    forward_output(b, {h, encoder_pooler(b, pooler, h, embedding_output)});
    return;
  }
  if (cfg.task != Task::lm) {
    // BertFor{Sequence,Token}Classification (heads_encoder.cpp)
    bert_cls_head(b, s, h, labels, embedding_output);
    return;
  }
  BertLinear tr = bert_linear(b, "cls.predictions.transform.dense", H, H, emb_train);
  TensorId tln_w = b.param("cls.predictions.transform.LayerNorm.weight", {H}, emb_train);
  TensorId tln_b = b.param("cls.predictions.transform.LayerNorm.bias", {H}, emb_train);
  TensorId dec_b = b.param("cls.predictions.bias", {V}, emb_train);
  masked_lm_head_loss(b, h, {tr, tln_w, tln_b, word, dec_b}, ids);
}

}  // namespace memplan
