#include "models/hf_config.h"

#include "engine/errors.h"

namespace memplan {

TransformerSpec import_hf_config(const nlohmann::json& config, const std::string& model_type_hint) {
  (void)config; (void)model_type_hint;
  throw InputError("model_type", "?", "HF import not implemented yet");
}

}  // namespace memplan
