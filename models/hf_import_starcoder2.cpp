// Starcoder2Config (transformers 5.17 models/starcoder2/configuration_starcoder2.py).
// Placeholder until the importer lands: refuses the model_type with a clear error.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_starcoder2(const ConfigReader&) {
  throw InputError("config.model_type", "\"starcoder2\"", "is not modelled yet");
}

}  // namespace memplan::hf
