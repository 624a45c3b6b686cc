// ErnieForMaskedLM (transformers 5.17 models/ernie/modular_ernie.py: ErnieModel is BertModel with ErnieEmbeddings),
// training forward + masked-LM loss; ErnieFor{Sequence,Token}Classification and ErnieModel (Task::feature) as BERT's
// heads (bert_model: the modular file's Ernie* layer, encoder, pooler and heads are the Bert* classes).
//
// ErnieEmbeddings.forward is BertEmbeddings.forward (bert.cpp) plus, when config.use_task_id, the task-type
// embedding: task_type_ids = torch.zeros(input_shape, dtype=long) (no task_type_ids is passed: a fresh [B, S] int64
// the lookup saves for its backward), task_type_embeddings = self.task_type_embeddings(task_type_ids) (a fresh
// [B, S, H], a local until the embeddings return), embeddings += task_type_embeddings (in place on the sum of the
// three lookups: AddBackward passes the gradient through to both), then LayerNorm and dropout.
// Registration: super().__init__ registers word, position and token-type embeddings, LayerNorm and the buffers;
// task_type_embeddings comes after them (assigned after super().__init__).
#include "engine/arch/encoders/bert_parts.h"

namespace memplan {

void build_ernie(GraphBuilder& b, const TransformerSpec& s) {
  hf_construction_scalar(b);
  BertEmbeddingParams emb = bert_embedding_params(b, s);  // BERT's, in BERT's order
  if (s.ernie_task_type_vocab > 0)  // then the task-type table (its buffers move after it: bert_model)
    emb.task_type = b.param("embeddings.task_type_embeddings.weight", {s.ernie_task_type_vocab, s.hidden_size},
                            !b.config().freeze_embeddings);
  bert_model(b, s, emb);
}

}  // namespace memplan
