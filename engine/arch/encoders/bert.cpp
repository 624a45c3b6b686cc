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
  const int64_t B = cfg.batch_size, S = cfg.seq_len;
  hf_construction_scalar(b);
  // The MLM decoder's own weight exists until tie_weights(); the classification models have none.
  const BertEmbeddingParams emb = bert_embedding_params(b, s);
  // The embeddings' non-persistent int64 buffers position_ids and token_type_ids [1, max_position_embeddings],
  // moved after its parameters (whole-run inference stream: two 4 KiB blocks after the LayerNorm's bias).
  // Registered in inference only (training predictions unchanged).
  TensorId position_buffer = kNoTensor;
  if (!b.training()) {
    position_buffer = b.buffer("embeddings.position_ids", {1, s.max_position_embeddings}, DType::i64);
    b.buffer("embeddings.token_type_ids", {1, s.max_position_embeddings}, DType::i64);
  }
  TensorId ids = b.input({B, S}, DType::i64);
  const TensorId labels = task_labels(b, ids);
  const TokenTypeIds type_ids = bert_token_type_ids(b);

  const TensorId h = bert_embeddings(b, s, emb, ids, type_ids, position_buffer);
  bert_model_tail(b, s, h, emb.word, ids, labels);
}

}  // namespace memplan
