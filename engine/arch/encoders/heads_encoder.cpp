// The sequence / token classification heads of the encoders (transformers 5.17 modeling_bert.py,
// modeling_roberta.py, modeling_distilbert.py; xlm-roberta's classes are roberta's), training forward + loss.
// Stages after the base model's last hidden states `seq` [B, S, H], which the model output keeps bound until the
// forward returns (after the loss):
//   seq_cls: the first token hidden_states[:, 0] (a strided [B, H] view: in fp32 the first linear saves the view
//            itself, which keeps the whole [B, S, H] storage until that linear's backward; under autocast it saves
//            its own bf16 copy), the family's pooling layers on [B, H], the classifier to [B, num_labels];
//            backward: SelectBackward's zero-filled [B, S, H] gradient.
//   token_cls: dropout over [B, S, H] (mask and output; the output is the rebound local, held until return),
//            the classifier to [B, S, num_labels].
//   loss: nn.CrossEntropyLoss over logits.view(-1, num_labels) and labels.view(-1). Every ...ForSequence-
//   Classification picks its loss by config.problem_type (None: num_labels == 1 -> regression, integer labels ->
//   single_label_classification); only cross entropy is modelled (check_cls_loss).
// Each head statement rebinds the head's local, so a value lives until the next statement has run, then only
// while saved.
#include "engine/arch/encoders/bert_parts.h"
#include "engine/errors.h"

namespace memplan {

namespace {
TensorId apply(GraphBuilder& b, const BertLinear& l, TensorId x) { return b.linear(x, l.w, l.b); }

// BertForTokenClassification / RobertaForTokenClassification / DistilBertForTokenClassification:
// sequence_output = self.dropout(sequence_output); logits = self.classifier(sequence_output).
void token_cls_head(GraphBuilder& b, TensorId seq, TensorId labels, double p, const BertLinear& classifier) {
  b.hold(seq);  // outputs[0] until the forward returns
  const TensorId x = b.dropout(seq, p);
  b.hold(x);  // the rebound local sequence_output
  const TensorId logits = apply(b, classifier, x);
  cls_loss(b, logits, labels, {seq, x});
}
}  // namespace

void cls_loss(GraphBuilder& b, TensorId logits, TensorId labels, std::initializer_list<TensorId> outputs) {
  if (!b.training()) {  // no labels: the logits are the output; the held locals die as the forward returns
    forward_output(b, {logits});
    return;
  }
  const int64_t rows = b.numel(labels), nl = b.config().num_labels;
  b.mark_model_end();
  b.hold(logits);  // the output's logits until the forward returns
  const TensorId loss = b.cross_entropy(b.view(logits, {rows, nl}), b.view(labels, {rows}));
  b.drop(logits);
  for (TensorId t : outputs)
    if (t != kNoTensor) b.drop(t);
  b.exit_autocast();
  b.set_loss(loss);
}

TensorId first_token(GraphBuilder& b, TensorId seq) {
  return b.view_copying_grad(seq, {b.config().batch_size, b.shape(seq)[2]});
}

void bert_cls_head(GraphBuilder& b, const TransformerSpec& s, TensorId seq, TensorId labels,
                   TensorId embedding_output) {
  check_cls_loss(b, s);
  const int64_t H = s.hidden_size, nl = b.config().num_labels;
  if (b.config().task == Task::token_cls) {
    token_cls_head(b, seq, labels, s.token_cls_dropout, bert_linear(b, "classifier", nl, H, true));
    return;
  }
  // BertModel(config) keeps its pooler (add_pooling_layer=True): registered after the encoder, before the
  // classifier.
  const BertLinear pooler = bert_linear(b, "pooler.dense", H, H, true);
  const BertLinear classifier = bert_linear(b, "classifier", nl, H, true);
  b.hold(seq);  // outputs.last_hidden_state until the forward returns
  // BertModel.forward still binds embedding_output while its pooler runs (bert_encoder released it at the
  // encoder's end, which is BertModel's return when there is no pooler).
  b.hold(embedding_output);
  // BertPooler: dense(hidden_states[:, 0]) then tanh (saving its output); outputs.pooler_output is bound until
  // the forward returns.
  const TensorId pooled = b.unary("tanh", apply(b, pooler, first_token(b, seq)), false, true);
  b.drop(embedding_output);
  b.hold(pooled);
  const TensorId logits = apply(b, classifier, b.dropout(pooled, s.seq_cls_dropout));
  cls_loss(b, logits, labels, {seq, pooled});
}

RobertaClsHead roberta_cls_params(GraphBuilder& b, const TransformerSpec& s) {
  const int64_t H = s.hidden_size, nl = b.config().num_labels;
  if (b.config().task == Task::token_cls) return {bert_linear(b, "classifier", nl, H, true), {}};
  // RobertaClassificationHead: dense, then out_proj (its nn.Dropout has no parameters).
  const BertLinear dense = bert_linear(b, "classifier.dense", H, H, true);
  return {dense, bert_linear(b, "classifier.out_proj", nl, H, true)};
}

void roberta_cls_head(GraphBuilder& b, const TransformerSpec& s, const RobertaClsHead& w, TensorId seq,
                      TensorId labels) {
  check_cls_loss(b, s);
  if (b.config().task == Task::token_cls) {
    token_cls_head(b, seq, labels, s.token_cls_dropout, w.first);
    return;
  }
  // RobertaModel(config, add_pooling_layer=False): no pooler. RobertaClassificationHead: x = features[:, 0, :];
  // dropout; dense; tanh; dropout; out_proj (one nn.Dropout module applied twice).
  b.hold(seq);  // outputs[0] until the forward returns
  TensorId x = b.dropout(first_token(b, seq), s.seq_cls_dropout);
  x = b.unary("tanh", apply(b, w.first, x), false, true);
  const TensorId logits = apply(b, w.second, b.dropout(x, s.seq_cls_dropout));
  cls_loss(b, logits, labels, {seq});
}

void distilbert_cls_head(GraphBuilder& b, const TransformerSpec& s, TensorId seq, TensorId labels) {
  check_cls_loss(b, s);
  const int64_t H = s.hidden_size, nl = b.config().num_labels;
  if (b.config().task == Task::token_cls) {
    token_cls_head(b, seq, labels, s.token_cls_dropout, bert_linear(b, "classifier", nl, H, true));
    return;
  }
  const BertLinear pre = bert_linear(b, "pre_classifier", H, H, true);
  const BertLinear classifier = bert_linear(b, "classifier", nl, H, true);
  b.hold(seq);  // hidden_state = distilbert_output[0], bound until the forward returns
  // pooled_output = hidden_state[:, 0]; pre_classifier; nn.ReLU()(...) (not in place: saves its output); dropout.
  TensorId x = b.unary("relu", apply(b, pre, first_token(b, seq)), false, true);
  const TensorId logits = apply(b, classifier, b.dropout(x, s.seq_cls_dropout));
  cls_loss(b, logits, labels, {seq});
}

}  // namespace memplan
