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
  hf_construction_scalar(b);
  // The MLM decoder's own weight exists until tie_weights(); the classification models have none.
  bert_model(b, s, bert_embedding_params(b, s));
}

}  // namespace memplan
