// Pieces of BertForMaskedLM (engine/arch/bert.cpp) that RobertaForMaskedLM (engine/arch/roberta.cpp) runs as
// they are: transformers 5.17 generates modeling_roberta.py from modeling_bert.py, so RobertaLayer / RobertaEncoder
// are BertLayer / BertEncoder under another name, and RobertaLMHead runs BertLMPredictionHead's statements
// (dense, gelu, LayerNorm, decoder) with its loss written the same way. Only the embeddings differ.
// DistilBertForMaskedLM (engine/arch/distilbert.cpp) runs BERT's attention core (its modeling file copies
// eager_attention_forward) and nn.Linear with biases; its blocks and head are its own.
#pragma once
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

// BertEncoder over the embeddings' output h: every BertLayer ("encoder.layer.<i>."), its parameters registered
// in module order, checkpointed / frozen per the run. BertModel.forward keeps h (embedding_output) bound until
// the encoder returns. Returns the last layer's output.
TensorId bert_encoder(GraphBuilder& b, const TransformerSpec& s, TensorId h);

// The masked-LM head's parameters (registered by the caller, in its module order) and the loss after it:
// dense -> gelu -> LayerNorm -> decoder (weight tied to the word embeddings, bias) -> CrossEntropyLoss over
// prediction_scores.view(-1, V) and labels = the input ids. The forward keeps sequence_output and the
// prediction scores bound until it returns, after the loss. Sets the loss.
struct MaskedLmHead {
  BertLinear dense;
  TensorId ln_w, ln_b, decoder, decoder_bias;
};
void masked_lm_head_loss(GraphBuilder& b, TensorId h, const MaskedLmHead& w, TensorId ids);

}  // namespace memplan
