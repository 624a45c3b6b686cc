// One entry point for "which model": a zoo name, a Hugging Face repo id of a zoo entry, a file, a directory
// holding a config.json, or a JSON document already in memory.
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/arch/spec.h"

namespace memplan {

// Resolution order, first match wins:
//   1. a zoo name (`memplan models`), exactly as listed;
//   2. a regular file holding
//      - an HF config.json (has "model_type"): imported with import_hf_config;
//      - a torchvision entry ({"source": "torchvision", "name": ...});
//      - a native graph (has "memplan_graph"): parsed and validated by parse_native_graph (NATIVE-FORMAT.md);
//        the model is named by its "name" key when present;
//   3. a directory holding a config.json (what save_pretrained writes, a hub snapshot): that file;
//   4. a zoo name or a Hugging Face repo id listed in models/zoo/hub_ids.tsv, compared case-insensitively
//      ("Qwen/Qwen2.5-7B", "qwen/qwen2.5-7b"): that zoo entry. A local path wins over an id, as
//      from_pretrained does.
// Anything else is an InputError naming "model" with the nearest zoo names, a pointer to `memplan models` and
// the native format; an unreadable file or invalid JSON is an InputError naming "model".
ModelSpec load_model(const std::string& name_or_path);

// An in-memory document (a config.json's content, e.g. transformers' AutoConfig.to_dict(); a native graph; a
// torchvision entry) given as JSON text, parsed with the same limits as a file. `label` names the text in
// errors and names the model unless the document does ("name" of a native graph, "_name_or_path" of an HF
// config).
ModelSpec load_model_text(std::string_view json_text, const std::string& label);

// The same dispatch for an already-parsed document; `name` labels the result and errors.
ModelSpec model_from_json(const nlohmann::json& doc, const std::string& name);

}  // namespace memplan
