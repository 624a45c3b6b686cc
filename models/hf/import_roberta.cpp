// RobertaConfig / XLMRobertaConfig (transformers 5.17 models/roberta/configuration_roberta.py,
// models/xlm_roberta/configuration_xlm_roberta.py) and what RobertaEmbeddings reads of them.
//
// Class defaults: BertConfig's (hidden 768, 12 layers, 12 heads, intermediate 3072, gelu, dropouts 0.1,
// max_position_embeddings 512, type_vocab_size 2, tie True) with vocab 50265 (roberta) or 30522 (xlm-roberta),
// and pad_token_id 1. The published checkpoints set max_position_embeddings 514 and type_vocab_size 1.
// Position ids start at pad_token_id + 1, so a sequence holds max_position_embeddings - pad_token_id - 1 tokens.
// Data2VecTextConfig (models/data2vec/configuration_data2vec_text.py) has the same fields with BertConfig's defaults
// (vocab 30522) and pad_token_id 1; its model classes are the Roberta ones under other names
// (modular_data2vec_text.py), so model_type data2vec-text reads here and replays through roberta.cpp.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_roberta(const ConfigReader& r, const std::string& type) {
  TransformerSpec s = import_bert(r, type == "roberta" ? 50265 : 30522);
  read_roberta_padding(r, s);
  return s;
}

void read_roberta_padding(const ConfigReader& r, TransformerSpec& s) {
  if (s.hidden_act != "gelu")
    throw InputError(r.name("hidden_act"), "\"" + s.hidden_act + "\"", "roberta is modelled with gelu");
  if (r.explicit_null("pad_token_id"))
    throw InputError(r.name("pad_token_id"), "null",
                     "RobertaEmbeddings needs a padding index (position ids are counted from it)");
  const int64_t pad = r.non_negative({"pad_token_id"}, 1);
  if (pad >= s.vocab_size)
    throw InputError(r.name("pad_token_id"), std::to_string(pad), "must be below vocab_size");
  if (pad + 1 >= s.max_position_embeddings)
    throw InputError(r.name("pad_token_id"), std::to_string(pad),
                     "leaves no position: positions start at pad_token_id + 1 and end at max_position_embeddings (" +
                         std::to_string(s.max_position_embeddings) + ")");
  s.position_id_offset = pad + 1;
}

}  // namespace memplan::hf
