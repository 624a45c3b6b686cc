// DeepseekV3Config (transformers 5.17 models/deepseek_v3/configuration_deepseek_v3.py).
// Placeholder until the importer lands: refuses the model_type with a clear error.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_deepseek_v3(const ConfigReader&) {
  throw InputError("config.model_type", "\"deepseek_v3\"", "is not modelled yet");
}

}  // namespace memplan::hf
