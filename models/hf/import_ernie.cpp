// ErnieConfig (transformers 5.17 models/ernie/configuration_ernie.py) and what the Ernie classes read of it.
//
// Class defaults: BertConfig's (vocab 30522, hidden 768, 12 layers, 12 heads, intermediate 3072, gelu, dropouts
// 0.1, max_position_embeddings 512, type_vocab_size 2, layer_norm_eps 1e-12, pad_token_id 0, classifier_dropout
// None, tie True) plus task_type_vocab_size 3 and use_task_id false. ERNIE 2.0 / 3.0 checkpoints
// (nghuyong/ernie-3.0-base-zh ...) set use_task_id true: the embeddings then add a task-type lookup
// (engine/arch/encoders/ernie.cpp); ERNIE 1.0 leaves it false and the model is BERT's. The fields are BERT's
// (import_bert).
// Refused, naming the field: is_decoder / add_cross_attention true (ErnieForCausalLM's causal mask and cross-attention
// layers: not modelled) and, through the shared reader, what import_bert refuses.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_ernie(const ConfigReader& r) {
  TransformerSpec s = import_bert(r, 30522);
  for (const char* key : {"is_decoder", "add_cross_attention"})
    if (r.boolean({key}, false))
      throw InputError(r.name(key), "true", "ernie is modelled as a bidirectional encoder (false only)");
  const int64_t task_vocab = r.positive({"task_type_vocab_size"}, 3);
  s.ernie_task_type_vocab = r.boolean({"use_task_id"}, false) ? task_vocab : 0;
  return s;
}

}  // namespace memplan::hf
