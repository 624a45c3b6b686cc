// Shared loader for the measured validation cases under data/validation/ (used by fidelity tests).
#pragma once
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/validation_case.h"

namespace memplan::testing {

inline std::vector<ValidationCase> load_cases(const std::string& file) {
  std::ifstream in(std::string(MEMPLAN_DATA_DIR) + "/validation/" + file);
  std::vector<ValidationCase> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(parse_validation_case(nlohmann::json::parse(line)));
  return out;
}

}  // namespace memplan::testing
