// XLMRobertaXLConfig (transformers models/xlm_roberta_xl/configuration_xlm_roberta_xl.py) and what the
// XLMRobertaXL classes read of it: BertConfig's fields under the XL class defaults (vocab 250880, hidden 2560, 36
// layers, 32 heads, intermediate 10240, max_position_embeddings 514, type_vocab_size 1; gelu, dropouts 0.1,
// layer_norm_eps 1e-5, pad_token_id 1), with RobertaEmbeddings' padding-index rules (import_roberta.cpp).
// Refused, naming the field: is_decoder / add_cross_attention true (XLMRobertaXLForCausalLM, cross-attention: not
// modelled), and through the shared reader any hidden_act but gelu.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_xlm_roberta_xl(const ConfigReader& r) {
  BertDefaults d;
  d.vocab = 250880;
  d.hidden = 2560;
  d.layers = 36;
  d.heads = 32;
  d.intermediate = 10240;
  d.max_positions = 514;
  d.type_vocab = 1;
  TransformerSpec s = import_bert(r, d);
  read_roberta_padding(r, s);
  for (const char* key : {"is_decoder", "add_cross_attention"})
    if (r.boolean({key}, false))
      throw InputError(r.name(key), "true", "xlm-roberta-xl is modelled as a bidirectional encoder (false only)");
  return s;
}

}  // namespace memplan::hf
