// Rendering an Estimate: a readable table or JSON. Numbers in JSON are integers of bytes or MiB with one
// decimal, written without locale.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/estimate.h"
#include "engine/verdict.h"

namespace memplan::cli {

struct DeviceBudget {
  std::string gpu_name;               // empty: no device given
  int64_t capacity_bytes = 0;         // memory the process may use (0: unknown)
  int64_t non_pytorch_bytes = 0;      // CUDA context, library handles and kernels outside the allocator
};

std::string mib(int64_t bytes);  // "1234.5"
std::string gib_text(double gib);  // a user-given GiB figure as written: "15.9", "80"
double round1(double v);         // one decimal: the --json number rule for MiB and milliseconds
double mib1(int64_t bytes);      // MiB rounded to one decimal
// Cautions about what the replay assumes for this configuration (one line each; empty when none): today a config
// whose use_cache is false with generate_tokens > 0.
std::vector<std::string> estimate_warnings(const ModelSpec& m, const RunConfig& c);
nlohmann::json estimate_json(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d);
std::string estimate_table(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d);
// Per-layer share of the steady-state forward.
std::string layers_table(const Estimate& e);
nlohmann::json layers_json(const Estimate& e);
// Fits on the device: the allocator replay under the capacity succeeded and reserved + non-PyTorch memory is
// within it. Requires d.capacity_bytes > 0.
bool fits_on(const Estimate& e, const DeviceBudget& d);
// What the device holds at the run's peak: PyTorch's reserved memory (under the capacity when one is given)
// plus the non-PyTorch memory.
int64_t device_total(const Estimate& e, const DeviceBudget& d);
// The verdict with its margin and the error band of comparable measured cases (engine/verdict.h): the margin
// is d.capacity_bytes - device_total, the band scales the uncapped peak reserved. Requires d.capacity_bytes > 0.
Verdict verdict_on(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d);
// The same for a device figure computed elsewhere (plan's finalists, serve): `reserved_bytes` scales the band.
Verdict verdict_for(const ModelSpec& m, const RunConfig& c, bool expandable_segments, int64_t budget_bytes,
                    int64_t device_total_bytes, int64_t reserved_bytes, bool fits);
// The one-line verdict: FITS / DOES NOT FIT / BORDERLINE with the margin and the band (or, without a device,
// the peaks).
std::string verdict_line(const ModelSpec& m, const RunConfig& c, const Estimate& e, const DeviceBudget& d);
// "margin +312.0 MiB, band +640.0 / -80.0 MiB (37 comparable measured cases: training/transformer/fp32)"
std::string margin_text(const Verdict& v);
// The verdict's keys of every --json answer: margin_bytes, band_bytes, band_under_bytes, band_over_bytes,
// verdict, band_class {key, cases, under_ppm, over_ppm, worst_under_case, worst_over_case}. `fits` stays the bool
// the caller sets.
void add_verdict_json(nlohmann::json& j, const Verdict& v);

}  // namespace memplan::cli
