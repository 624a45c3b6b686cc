// ElectraForMaskedLM / ElectraForSequenceClassification / ElectraForTokenClassification (transformers 5.17
// models/electra/modeling_electra.py), training forward + loss; in inference (model.eval(), inference_mode) the
// forward alone (no labels, no loss, dropout the identity, nothing saved), and ElectraModel (--task feature).
//
// Stages:
//   ElectraEmbeddings (BertEmbeddings.forward copied, at embedding_size E): word + token_type, + position
//     (the [1, S] slice of the position_ids buffer), LayerNorm(E), dropout;
//   embeddings_project (nn.Linear(E, H)) when E != H: it rebinds embedding_output, which ElectraModel.forward
//     keeps bound until the encoder returns;
//   ElectraEncoder: BertEncoder under another name (the layers are "Copied from" BERT's, the intermediate runs
//     ACT2FN[hidden_act], gelu here): bert_encoder (bert_parts.h); no pooler;
//   heads (after the base model in every class):
//     lm:        ElectraGeneratorPredictions (dense H -> E, gelu, LayerNorm(E)), generator_lm_head (E -> V, weight
//                tied to the word embeddings, bias of its own), CrossEntropyLoss over the input ids: the statements
//                of BERT's masked-LM head (masked_lm_head_loss);
//     seq_cls:   ElectraClassificationHead: first token, dropout, dense, gelu (GELUActivation, saving its input),
//                dropout, out_proj; no pooler;
//     token_cls: dropout, classifier, as BERT's (roberta_cls_head's token path).
// Parameter order: the harness builds the model and then moves it to the GPU (Module._apply: each module's
// children first, then its own parameters, then its buffers), so the GPU allocations follow module order:
// embeddings (word, position, token_type, LayerNorm), embeddings_project, the layers, then the head. The
// generator head's modules are created LayerNorm before dense (ElectraGeneratorPredictions.__init__); the tied
// generator_lm_head.weight is the word embeddings' tensor, moved once.
#include "engine/arch/encoders/bert_parts.h"
#include "engine/errors.h"
#include "engine/limits.h"

namespace memplan {

void build_electra(GraphBuilder& b, const TransformerSpec& s) {
  const auto& cfg = b.config();
  const int64_t B = cfg.batch_size, S = cfg.seq_len, H = s.hidden_size, V = s.vocab_size, E = s.embedding_size;
  if (E <= 0 || E > kMaxDim)
    throw InputError("model.embedding_size", std::to_string(E), "must be a positive integer (electra)");
  const bool emb_train = !cfg.freeze_embeddings;
  hf_construction_scalar(b);
  TensorId word = b.param("embeddings.word_embeddings.weight", {V, E}, emb_train);
  TensorId posw = b.param("embeddings.position_embeddings.weight", {s.max_position_embeddings, E}, emb_train);
  TensorId typew = b.param("embeddings.token_type_embeddings.weight", {s.type_vocab_size, E}, emb_train);
  TensorId eln_w = b.param("embeddings.LayerNorm.weight", {E}, emb_train);
  TensorId eln_b = b.param("embeddings.LayerNorm.bias", {E}, emb_train);
  // The embeddings' non-persistent int64 buffers position_ids and token_type_ids [1, max_position_embeddings],
  // moved after its parameters (whole-run inference stream: two 4 KiB blocks after the LayerNorm's bias).
  // Registered in inference only (training predictions unchanged).
  TensorId position_buffer = kNoTensor;
  if (!b.training()) {
    position_buffer = b.buffer("embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
    b.buffer("embeddings.token_type_ids", {1, s.max_position_embeddings}, DType::i64);
  }
  const bool project = E != H;
  BertLinear proj{};
  if (project) proj = bert_linear(b, "embeddings_project", H, E, emb_train);
  TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);
  // token_type_ids: the zero buffer gathered at the position ids and expanded (BertEmbeddings.forward).
  const TokenTypeIds type_ids = bert_token_type_ids(b);

  // ElectraEmbeddings.forward runs BertEmbeddings.forward's statements.
  TensorId h = bert_embeddings(b, s, {word, posw, typew, eln_w, eln_b}, ids, type_ids, position_buffer);
  // embedding_output = self.embeddings_project(embedding_output): the embeddings' output dies here unless saved.
  if (project) h = b.linear(h, proj.w, proj.b);
  h = bert_encoder(b, s, h);
  if (cfg.task == Task::feature) {  // AutoModel: ElectraModel (no pooler), last_hidden_state
    forward_output(b, {h});
    return;
  }

  if (cfg.task == Task::lm) {
    TensorId ln_w = b.param("generator_predictions.LayerNorm.weight", {E}, emb_train);
    TensorId ln_b = b.param("generator_predictions.LayerNorm.bias", {E}, emb_train);
    BertLinear dense = bert_linear(b, "generator_predictions.dense", E, H, emb_train);
    // tie_word_embeddings false: generator_lm_head keeps a weight of its own (registered before its bias).
    TensorId dec_w = s.tie_word_embeddings ? word : b.param("generator_lm_head.weight", {V, E}, emb_train);
    TensorId dec_b = b.param("generator_lm_head.bias", {V}, emb_train);
    masked_lm_head_loss(b, h, {dense, ln_w, ln_b, dec_w, dec_b}, ids);
    return;
  }
  check_cls_loss(b, s);
  if (cfg.task == Task::token_cls) {
    // ElectraForTokenClassification: dropout(classifier_dropout or hidden_dropout_prob), classifier.
    roberta_cls_head(b, s, roberta_cls_params(b, s), h, labels);
    return;
  }
  const int64_t nl = cfg.num_labels;
  const BertLinear dense = bert_linear(b, "classifier.dense", H, H, true);
  const BertLinear out_proj = bert_linear(b, "classifier.out_proj", nl, H, true);
  b.hold(h);  // sequence_output = discriminator_hidden_states[0], bound until the forward returns
  // ElectraClassificationHead.forward: every statement rebinds x.
  TensorId x = b.dropout(first_token(b, h), s.seq_cls_dropout);
  x = b.unary("gelu", b.linear(x, dense.w, dense.b), true, false);
  const TensorId logits = b.linear(b.dropout(x, s.seq_cls_dropout), out_proj.w, out_proj.b);
  cls_loss(b, logits, labels, {h});
}

}  // namespace memplan
