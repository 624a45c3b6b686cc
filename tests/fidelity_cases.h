// Shared loader for the measured validation cases under data/validation/ (used by fidelity tests). Defined in
// fidelity_cases.cpp: most test sources include this header, and one out-of-line copy of the JSON parsing keeps
// their compile time down (CI has 2 cores).
#pragma once
#include <string>
#include <vector>

#include "models/validation_case.h"

namespace memplan::testing {

// Every case of data/validation/FILE (one JSON object a line), parsed as `memplan validate` reads it.
std::vector<ValidationCase> load_cases(const std::string& file);

// The median of `v` (the mean of the middle two for an even count); `v` not empty.
double median(std::vector<double> v);

}  // namespace memplan::testing
