// Rendering an Estimate: a readable table or JSON. Numbers in JSON are integers of bytes or MiB with one
// decimal, written without locale.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "engine/estimate.h"

namespace memplan::cli {

struct DeviceBudget {
  std::string gpu_name;               // empty: no device given
  int64_t capacity_bytes = 0;         // memory the process may use (0: unknown)
  int64_t non_pytorch_bytes = 0;      // CUDA context, library handles and kernels outside the allocator
};

std::string mib(int64_t bytes);  // "1234.5"
std::string gib_text(double gib);  // a user-given GiB figure as written: "15.9", "80"
double mib1(int64_t bytes);      // MiB rounded to one decimal
nlohmann::json estimate_json(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d);
std::string estimate_table(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d);
// Per-layer share of the steady-state forward.
std::string layers_table(const Estimate& e);
nlohmann::json layers_json(const Estimate& e);
// Fits on the device: the allocator replay under the capacity succeeded and reserved + non-PyTorch memory is
// within it. Requires d.capacity_bytes > 0.
bool fits_on(const Estimate& e, const DeviceBudget& d);
// The one-line verdict: fits / does not fit with the margin.
std::string verdict_line(const Estimate& e, const DeviceBudget& d);

}  // namespace memplan::cli
