// Helpers the family tests (tests/test_family_*.cpp) share: import a config.json text, the error an importer
// raises (or "no error"), bytes as MiB.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "models/hf_config.h"

namespace memplan::testing {

inline TransformerSpec import_config(const std::string& text) {
  return import_hf_config(nlohmann::json::parse(text));
}

inline std::string input_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

inline double to_mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace memplan::testing
