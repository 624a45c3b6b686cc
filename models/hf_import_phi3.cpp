// Phi3Config (transformers 5.17 models/phi3/configuration_phi3.py).
// Placeholder until the importer lands: refuses the model_type with a clear error.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_phi3(const ConfigReader&) {
  throw InputError("config.model_type", "\"phi3\"", "is not modelled yet");
}

}  // namespace memplan::hf
