// RobertaForMaskedLM (transformers 5.17 models/roberta/modeling_roberta.py; XLMRobertaForMaskedLM in
// models/xlm_roberta runs the same code under other class names), training forward + masked-LM loss.
//
// The encoder is BERT's (bert_parts.h). What differs is RobertaEmbeddings.forward:
//   - position ids come from the input ids (create_position_ids_from_input_ids): mask = ids.ne(pad).int(),
//     (cumsum(mask, 1).type_as(mask) + past) * mask, .long() + pad: a chain of [B, S] integer tensors, each a
//     kernel, where BERT slices its position_ids buffer [1, S];
//   - token_type_ids: the all-zero buffer expanded to [B, max_positions] and gathered at the position ids, a
//     fresh [B, S] int64 tensor (the token-type embedding saves it);
//   - the position embeddings are [B, S, H] (one row per token, BERT's broadcast [1, S, H]), a local bound
//     until the embeddings return, like inputs_embeds and token_type_embeddings;
//   - registration order: word, token_type, LayerNorm, then position_embeddings (created after the buffers).
// RobertaLMHead: lm_head.bias is the module's own parameter (listed before its children: dense, layer_norm;
// decoder.weight is tied to the word embeddings and decoder.bias to lm_head.bias), gelu fixed (not
// config.hidden_act).
// RobertaForSequenceClassification / RobertaForTokenClassification (RunConfig::task): the same RobertaModel (no
// pooler) and their own heads, engine/arch/encoders/heads_encoder.cpp.
// CamembertFor{MaskedLM,SequenceClassification,TokenClassification} (models/camembert, model_type camembert) run
// these statements under other class names; only the head's place in module order differs (head_first).
// Data2VecTextFor{MaskedLM,SequenceClassification,TokenClassification} and Data2VecTextModel (models/data2vec,
// model_type data2vec-text; modular_data2vec_text.py) are the Roberta classes under other names in Roberta's order.
// Task::feature (inference): RobertaModel with its pooler (BertPooler's statements), both outputs returned.
#include "engine/arch/encoders/bert_parts.h"

namespace memplan {

void build_roberta(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size;
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  // XLMRobertaFor{Sequence,Token}Classification register their head before the base model (bert_parts.h);
  // every Camembert class does, CamembertForMaskedLM too (its lm_head is assigned before self.roberta).
  const bool camembert = s.model_type == "camembert";
  const bool cls = cfg.task == Task::seq_cls || cfg.task == Task::token_cls;
  const bool head_first = cls && (s.model_type == "xlm-roberta" || camembert);
  RobertaClsHead head;
  if (head_first) head = roberta_cls_params(b, s);
  // CamembertForMaskedLM: the model is moved to the GPU module by module (children first), so lm_head's dense and
  // layer_norm come first, then its decoder: the weight is the tied word embedding, the bias lm_head.bias.
  // XLMRobertaForMaskedLM assigns its lm_head before the base model too (5.17), so its order is CamembertForMaskedLM's
  // (whole-run inference stream f19-ei-xlmrl-mlm-bf16-b24s500: lm_head.dense's 2 MiB weight is the first block).
  // Inference only, so that the training predictions stay as they were; applied to training it moves the two
  // measured xlm-roberta MLM training rows closer (f7-xlmr allocated 316 -> 190 ppm, f8-xlmrl reserved 249 -> 0 ppm).
  const bool lm_head_first =
      cfg.task == Task::lm && (camembert || (s.model_type == "xlm-roberta" && !b.training()));
  BertLinear lm_dense{};
  TensorId lm_ln_w = kNoTensor, lm_ln_b = kNoTensor, lm_bias = kNoTensor;
  auto lm_head_params = [&] {
    lm_dense = bert_linear(b, "lm_head.dense", H, H, emb_train);
    lm_ln_w = b.param("lm_head.layer_norm.weight", {H}, emb_train);
    lm_ln_b = b.param("lm_head.layer_norm.bias", {H}, emb_train);
  };
  if (lm_head_first) lm_head_params();
  TensorId word = b.param("embeddings.word_embeddings.weight", {V, H}, emb_train);
  if (lm_head_first) lm_bias = b.param("lm_head.bias", {V}, emb_train);
  TensorId typew = b.param("embeddings.token_type_embeddings.weight", {s.type_vocab_size, H}, emb_train);
  TensorId eln_w = b.param("embeddings.LayerNorm.weight", {H}, emb_train);
  TensorId eln_b = b.param("embeddings.LayerNorm.bias", {H}, emb_train);
  TensorId posw = b.param("embeddings.position_embeddings.weight", {s.max_position_embeddings, H}, emb_train);
  // The embeddings' non-persistent int64 buffers position_ids and token_type_ids [1, max_position_embeddings], moved
  // after its parameters (whole-run inference stream). Registered in inference only (training as fitted).
  if (!b.training()) {
    b.buffer("embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
    b.buffer("embeddings.token_type_ids", {1, s.max_position_embeddings}, DType::i64);
  }
  TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);

  const RobertaEmbeddingIds eids = roberta_embedding_ids(b, ids);
  const TensorId position_ids = eids.position_ids, type_ids = eids.type_ids;

  TensorId we = b.embedding(ids, word);
  b.hold(we);  // inputs_embeds, token_type_embeddings and position_embeddings: locals until forward returns
  TensorId te = b.embedding(type_ids, typew);
  b.hold(te);
  TensorId e = b.add(we, te);
  TensorId pe = b.embedding(position_ids, posw);
  b.hold(pe);
  e = b.add(e, pe);
  TensorId h = b.dropout(b.layer_norm(e, eln_w, eln_b), s.embd_dropout);
  for (TensorId t : {we, te, pe, position_ids}) b.drop(t);
  if (!b.training()) b.drop(type_ids);
  const TensorId embedding_output = h;
  h = bert_encoder(b, s, h);
  if (cfg.task == Task::feature) {
    // AutoModel: RobertaModel(config) (XLMRobertaModel, CamembertModel) keeps its pooler (add_pooling_layer=True).
    const BertLinear pooler = bert_linear(b, "pooler.dense", H, H, true);
    forward_output(b, {h, encoder_pooler(b, pooler, h, embedding_output)});
    return;
  }
  if (cls) {
    if (!head_first) head = roberta_cls_params(b, s);
    roberta_cls_head(b, s, head, h, labels);  // RobertaFor{Sequence,Token}Classification (heads_encoder.cpp)
    return;
  }
  if (!lm_head_first) {
    lm_head_params();
    lm_bias = b.param("lm_head.bias", {V}, emb_train);
  }
  masked_lm_head_loss(b, h, {lm_dense, lm_ln_w, lm_ln_b, word, lm_bias}, ids);
}

}  // namespace memplan
