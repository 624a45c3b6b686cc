// CamembertConfig (transformers 5.17 models/camembert/configuration_camembert.py) and what the Camembert classes
// read of it.
//
// Class defaults: XLMRobertaConfig's (vocab 30522, hidden 768, 12 layers, 12 heads, intermediate 3072, gelu,
// dropouts 0.1, max_position_embeddings 512, type_vocab_size 2, layer_norm_eps 1e-12, pad_token_id 1,
// classifier_dropout None, tie True). The published almanach/camembert-base sets vocab 32005,
// max_position_embeddings 514, type_vocab_size 1. modeling_camembert.py is modeling_roberta.py under other
// names (CamembertEmbeddings counts position ids from the padding index as RobertaEmbeddings does), so the
// fields are RoBERTa's (import_roberta.cpp) and the builder is roberta's.
// Refused, naming the field: is_decoder / add_cross_attention true (a causal mask, cross-attention layers: not
// modelled) and, through the shared reader, any hidden_act but gelu.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_camembert(const ConfigReader& r) {
  TransformerSpec s = import_roberta(r, "camembert");
  for (const char* key : {"is_decoder", "add_cross_attention"})
    if (r.boolean({key}, false))
      throw InputError(r.name(key), "true", "camembert is modelled as a bidirectional encoder (false only)");
  return s;
}

}  // namespace memplan::hf
