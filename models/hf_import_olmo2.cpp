// Olmo2Config (transformers 5.17 models/olmo2/configuration_olmo2.py).
// Placeholder until the importer lands: refuses the model_type with a clear error.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_olmo2(const ConfigReader&) {
  throw InputError("config.model_type", "\"olmo2\"", "is not modelled yet");
}

}  // namespace memplan::hf
