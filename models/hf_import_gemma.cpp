// GemmaConfig / Gemma3TextConfig (transformers 5.17 models/gemma*/configuration_gemma*.py).
// Placeholder until the importer lands: refuses the model_type with a clear error.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_gemma(const ConfigReader&, const std::string&) {
  throw InputError("config.model_type", "\"gemma\"", "is not modelled yet");
}

}  // namespace memplan::hf
