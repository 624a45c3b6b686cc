// One entry point for "which model": a zoo name or a path to a JSON file.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "engine/arch/spec.h"

namespace memplan {

// A zoo name loads the bundled entry. Otherwise `name_or_path` is read as a file holding
//   - an HF config.json (has "model_type"): imported with import_hf_config;
//   - a torchvision entry ({"source": "torchvision", "name": ...});
//   - a native graph (has "memplan_graph"): parsed and validated by parse_native_graph (NATIVE-FORMAT.md);
//     the model is named by its "name" key when present.
// Anything else, an unreadable file or invalid JSON is an InputError naming "model".
ModelSpec load_model(const std::string& name_or_path);

// The same dispatch for an already-parsed document; `name` labels the result and errors.
ModelSpec model_from_json(const nlohmann::json& doc, const std::string& name);

}  // namespace memplan
