// Hugging Face config.json -> TransformerSpec, with transformers' defaults for absent keys.
//
// Supported model_type values: supported_hf_model_types(). Defaults follow the configuration
// classes of transformers 5.x (see hf_config.cpp for the commit read); a key that is absent or JSON null takes
// the default the class would use, including derived ones (head_dim = hidden / heads, kv heads = heads,
// gpt2 n_inner = 4 * n_embd). Keys that do not change memory (rope, eps, token ids, ...) and unknown keys are
// ignored, as transformers itself stores them without effect.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/arch/spec.h"

namespace memplan {

// `model_type_hint`, when non-empty, overrides config["model_type"].
// Throws InputError naming the key ("config.<key>") and its value when the config is malformed (wrong JSON
// type, non-positive size, heads not dividing hidden, kv heads not dividing heads, dropout outside [0, 1)) or
// the model_type is unsupported.
TransformerSpec import_hf_config(const nlohmann::json& config, const std::string& model_type_hint = "");

// The one-line reason an unknown model_type is refused: the nearest supported types by edit distance, the whole
// list, and a pointer to the native format.
std::string unsupported_type_message(const std::string& type);

// The model_types import_hf_config accepts, in a fixed order (for messages and listings).
const std::vector<std::string>& supported_hf_model_types();

}  // namespace memplan
