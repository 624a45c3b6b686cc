// T5Config (transformers 5.17 models/t5/configuration_t5.py).
// Placeholder until the importer lands: refuses the model_type with a clear error.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_t5(const ConfigReader&) {
  throw InputError("config.model_type", "\"t5\"", "is not modelled yet");
}

}  // namespace memplan::hf
