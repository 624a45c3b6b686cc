// GPTNeoXConfig (transformers 5.17 models/gpt_neox/configuration_gpt_neox.py).
// Placeholder until the importer lands: refuses the model_type with a clear error.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_gpt_neox(const ConfigReader&) {
  throw InputError("config.model_type", "\"gpt_neox\"", "is not modelled yet");
}

}  // namespace memplan::hf
