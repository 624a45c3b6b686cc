// Qwen3Config / Qwen3MoeConfig (transformers 5.17 models/qwen3*/configuration_qwen3*.py).
// Placeholder until the importer lands: refuses the model_type with a clear error.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_qwen3(const ConfigReader&, const std::string&) {
  throw InputError("config.model_type", "\"qwen3\"", "is not modelled yet");
}

}  // namespace memplan::hf
