// The native JSON model format (models/NATIVE-FORMAT.md) <-> NativeGraph (engine/arch/native/native.h).
//
// Contract:
//  - parse_native_graph accepts a document with "memplan_graph": 1, rejects unknown keys, and runs
//    validate_native; every InputError names a path into the document (`layers[0].ops[3].in[1]`).
//  - write_native_graph emits the canonical text: fixed key order, defaults omitted, one input / param / op per
//    line. parse(write(g)) == g for any valid g, and write(parse(t)) == t for canonical text t.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "engine/arch/native/native.h"

namespace memplan {

NativeGraph parse_native_graph(const nlohmann::json& doc);
NativeGraph parse_native_graph_text(const std::string& text);  // invalid JSON is an InputError on "model"
std::string write_native_graph(const NativeGraph& g);

}  // namespace memplan
