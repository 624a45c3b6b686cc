// GptOssConfig (transformers 5.17 models/gpt_oss/configuration_gpt_oss.py).
// Placeholder until the importer lands: refuses the model_type with a clear error.
#include "models/hf_config_reader.h"

namespace memplan::hf {

TransformerSpec import_gpt_oss(const ConfigReader&) {
  throw InputError("config.model_type", "\"gpt_oss\"", "is not modelled yet");
}

}  // namespace memplan::hf
