// Pieces of BertForMaskedLM (engine/arch/encoders/bert.cpp) that RobertaForMaskedLM (engine/arch/encoders/roberta.cpp) runs as
// they are: transformers 5.17 generates modeling_roberta.py from modeling_bert.py, so RobertaLayer / RobertaEncoder
// are BertLayer / BertEncoder under another name, and RobertaLMHead runs BertLMPredictionHead's statements
// (dense, gelu, LayerNorm, decoder) with its loss written the same way. Only the embeddings differ.
// DistilBertForMaskedLM (engine/arch/encoders/distilbert.cpp) runs BERT's attention core (its modeling file copies
// eager_attention_forward) and nn.Linear with biases; its blocks and head are its own.
#pragma once
#include <initializer_list>
#include <string>

#include "engine/arch/builders.h"

namespace memplan {

struct BertLinear {
  TensorId w, b;
};
// nn.Linear(in, out) with its bias: weight then bias, as model.parameters() lists them.
BertLinear bert_linear(GraphBuilder& b, const std::string& name, int64_t out, int64_t in, bool train);

// The attention core BERT's modeling file defines and DistilBERT's copies (eager_attention_forward, or
// integrations/sdpa_attention.py), over head-split q / k / v views [B, heads, S, head_dim] with no mask (none is
// passed: create_bidirectional_mask returns None for both). `output` is the context [B, S, heads, head_dim]
// (contiguous); `weights` the attention probabilities after dropout that eager returns (kNoTensor for SDPA):
// DistilBERT's block keeps them bound as `_` until it returns (bert_encoder does not hold them).
struct BertAttentionOut {
  TensorId output, weights;
};
BertAttentionOut bert_attention(GraphBuilder& b, const TransformerSpec& s, TensorId q, TensorId k, TensorId v);
// BertSelfAttention.forward on `x` [B, S, H]: the query / key / value projections viewed [B, heads, S, head_dim]
// (bound until the attention returns) and bert_attention over them.
BertAttentionOut bert_self_attention(GraphBuilder& b, const TransformerSpec& s, const BertLinear& q,
                                     const BertLinear& k, const BertLinear& v, TensorId x);

// BertEncoder over the embeddings' output h: every BertLayer ("encoder.layer.<i>."), its parameters registered
// in module order, checkpointed / frozen per the run. BertModel.forward keeps h (embedding_output) bound until
// the encoder returns. Returns the last layer's output.
TensorId bert_encoder(GraphBuilder& b, const TransformerSpec& s, TensorId h);

// The masked-LM head's parameters (registered by the caller, in its module order) and the loss after it:
// dense -> gelu -> LayerNorm -> decoder (weight tied to the word embeddings, bias) -> CrossEntropyLoss over
// prediction_scores.view(-1, V) and labels = the input ids. The forward keeps sequence_output and the
// prediction scores bound until it returns, after the loss. Sets the loss. Inference: no loss; the prediction
// scores are the output (forward_output).
struct MaskedLmHead {
  BertLinear dense;
  TensorId ln_w, ln_b, decoder, decoder_bias;
};
void masked_lm_head_loss(GraphBuilder& b, TensorId h, const MaskedLmHead& w, TensorId ids);

// ---- classification heads (engine/arch/encoders/heads_encoder.cpp): RunConfig::task seq_cls / token_cls on the encoders.
// task_labels and check_cls_loss: engine/arch/builders.h (shared with the decoders' heads).
// The end of every ...For{Sequence,Token}Classification forward once `logits` exists: CrossEntropyLoss over
// logits.view(-1, num_labels) and labels.view(-1) (log_softmax in the logits' dtype, nll_loss in fp32 under
// autocast), the logits held by the output until the forward returns, then `outputs` (tensors the caller held:
// the model output's hidden states, the head's locals; kNoTensor skipped) dropped, the autocast cache cleared, the loss set.
// Inference: no loss; the logits are the output and `outputs` stay bound until the forward returns.
void cls_loss(GraphBuilder& b, TensorId logits, TensorId labels, std::initializer_list<TensorId> outputs);
// hidden_states[:, 0] (the first token, [B, H]): a strided view whose SelectBackward writes the incoming gradient
// into a zero-filled gradient of the whole [B, S, H] input (a fresh buffer of its size).
TensorId first_token(GraphBuilder& b, TensorId seq);
// The heads after the encoder's last hidden states `seq` [B, S, H] (held here until the forward returns), their
// parameters registered first (after the encoder's: the head modules come after the base model's). Set the loss.
//   bert:       seq_cls: BertModel's pooler (dense + tanh on the first token), dropout, classifier; the pooler
//               runs inside BertModel.forward, which keeps `embedding_output` bound until it returns (after the
//               pooler: whole-run amp stream, where nothing saves it);
//               token_cls: dropout, classifier on every position.
//   roberta:    seq_cls: RobertaClassificationHead (first token, dropout, dense, tanh, dropout, out_proj), no pooler;
//               token_cls: as bert's. (xlm-roberta runs the same code.)
//   distilbert: seq_cls: first token, pre_classifier, ReLU, dropout(seq_classif_dropout), classifier;
//               token_cls: dropout(config.dropout), classifier.
// modernbert's heads share its prediction head with the masked LM: engine/arch/encoders/modernbert.cpp.
void bert_cls_head(GraphBuilder& b, const TransformerSpec& s, TensorId seq, TensorId labels,
                   TensorId embedding_output);
// roberta's head parameters are registered apart from its forward: XLMRobertaFor{Sequence,Token}Classification
// assign the head before the base model in __init__ (RobertaFor... after it), so there they come first in module
// order and model.to("cuda") moves them before the embeddings. token_cls: `first` is the classifier; seq_cls:
// `first` classifier.dense, `second` classifier.out_proj.
struct RobertaClsHead {
  BertLinear first, second;
};
RobertaClsHead roberta_cls_params(GraphBuilder& b, const TransformerSpec& s);
void roberta_cls_head(GraphBuilder& b, const TransformerSpec& s, const RobertaClsHead& w, TensorId seq,
                      TensorId labels);
void distilbert_cls_head(GraphBuilder& b, const TransformerSpec& s, TensorId seq, TensorId labels);

// BertEmbeddings' token types when no token_type_ids are passed (ELECTRA's and ALBERT's embeddings copy it), made
// before the word embedding. Training: a [B, S] int64 block until the lookup (as the training rows were fitted).
// Inference: the zero buffer gathered at the position ids, a [1, S] int64 local (`gathered`) until the embeddings
// return, expanded to [B, S] (a view); nn.Embedding copies the expanded index to a contiguous [B * S] int64 block for
// the lookup, freed after it (whole-run inference stream, bert-base b64 s512).
// position_ids[:, :S]: a view of the embeddings' non-persistent position_ids buffer (`buffer`, registered after the
// embeddings' parameters) in inference; training keeps the [1, S] int64 input its rows were fitted with (kNoTensor
// buffer: the builder registers none there).
TensorId bert_position_ids(GraphBuilder& b, TensorId buffer);
struct TokenTypeIds {
  TensorId ids = kNoTensor, gathered = kNoTensor;
};
TokenTypeIds bert_token_type_ids(GraphBuilder& b);
TensorId bert_token_type_embedding(GraphBuilder& b, const TokenTypeIds& t, TensorId table);

// BertEmbeddings.forward after the token types are made (bert_token_type_ids): word + token-type lookups, + the
// position lookup, LayerNorm, dropout (ElectraEmbeddings runs the same statements; ErnieEmbeddings adds, with
// `task_type` set, the task-type lookup of a zeros [B, S] index in place before the LayerNorm). Returns the
// embeddings' output; the lookups are released as the forward returns.
struct BertEmbeddingParams {
  TensorId word, position, token_type, ln_w, ln_b;
  TensorId task_type = kNoTensor;
};
// BertEmbeddings' parameters in registration order ("embeddings.": word, position, token-type embeddings, LayerNorm),
// trainable unless the run freezes the embeddings; with the masked-LM task the decoder's own [V, H] weight exists
// until tie_weights() (a construction temporary, whole-run stream). task_type stays kNoTensor.
BertEmbeddingParams bert_embedding_params(GraphBuilder& b, const TransformerSpec& s);
TensorId bert_embeddings(GraphBuilder& b, const TransformerSpec& s, const BertEmbeddingParams& w, TensorId ids,
                         const TokenTypeIds& type_ids, TensorId position_buffer);

// BertModel.forward and the head BertFor<task> puts after it, once the embeddings' parameters `emb` are registered
// (ErnieModel and its heads run the same statements): the embeddings' non-persistent position_ids / token_type_ids
// buffers (inference only, moved after the parameters), input_ids, the task's labels, the token types,
// bert_embeddings, the encoder (the embeddings' output bound until it returns); then Task::feature: the pooler, both
// outputs returned; seq_cls / token_cls: bert_cls_head; lm: BertOnlyMLMHead ("cls.predictions.": transform dense,
// LayerNorm, the decoder tied to the word embeddings with its own bias) and the masked-LM loss against the ids.
void bert_model(GraphBuilder& b, const TransformerSpec& s, const BertEmbeddingParams& emb);

// RobertaEmbeddings.forward's indices (XLMRobertaXLEmbeddings runs the same statements), every one [B, S]:
// create_position_ids_from_input_ids (ids.ne(pad).int() bound as `mask` until the function returns; cumsum, which
// accumulates an int32 input in int64 and in inference first copies the mask to int64; type_as, + past, * mask,
// .long() + pad), the position ids held until the embeddings return; then the token-type buffer expanded and
// gathered at them, `type_ids`, held in inference only (training: the lookup saves it). The caller drops both.
struct RobertaEmbeddingIds {
  TensorId position_ids, type_ids;
};
RobertaEmbeddingIds roberta_embedding_ids(GraphBuilder& b, TensorId ids);

// ---- inference (forward_only_inference)
// BertPooler / RobertaPooler (and their copies): tanh(dense(hidden_states[:, 0])) over the last hidden states
// `seq`, which stay bound (the model output's last_hidden_state); the base model's forward still binds
// `embedding_output` (kNoTensor: none) while its pooler runs. Returns pooler_output. The caller registered `pooler`
// after the encoder's parameters and ends the forward (forward_output).
TensorId encoder_pooler(GraphBuilder& b, const BertLinear& pooler, TensorId seq, TensorId embedding_output);

}  // namespace memplan
