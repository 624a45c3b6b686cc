// Hugging Face config.json -> TransformerSpec, with transformers' defaults for absent keys.
#pragma once
#include <nlohmann/json.hpp>

#include "engine/arch/spec.h"

namespace memplan {

// Throws InputError naming the key and value when the config is malformed or the model_type unsupported.
TransformerSpec import_hf_config(const nlohmann::json& config, const std::string& model_type_hint = "");

}  // namespace memplan
