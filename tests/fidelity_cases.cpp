#include "fidelity_cases.h"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>
#include "data_dir.h"

namespace memplan::testing {

std::vector<ValidationCase> load_cases(const std::string& file) {
  std::ifstream in(std::string(MEMPLAN_DATA_DIR) + "/validation/" + file);
  std::vector<ValidationCase> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(parse_validation_case(nlohmann::json::parse(line)));
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace memplan::testing
