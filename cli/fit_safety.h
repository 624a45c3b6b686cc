// `memplan fit` on a BORDERLINE verdict (engine/verdict.h): what buys safety, each step estimated by the engine
// where it can be: PYTORCH_ALLOC_CONF=expandable_segments:True (the allocator model re-run), one micro-batch less
// (the step re-run), and the torch.cuda.set_per_process_memory_fraction cap that makes a short prediction fail in
// the first steps rather than hours into the run.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/report.h"
#include "engine/estimate.h"
#include "engine/verdict.h"

namespace memplan::cli {

struct SafetyStep {
  std::string what, flags;
  int64_t device_bytes = 0;
  Verdict verdict;
};

struct Safety {
  std::vector<SafetyStep> steps;  // each applied to the run as given, not on top of each other
  double memory_fraction = 0;     // (budget - non-PyTorch) / budget, rounded down to 3 decimals
  int64_t cap_bytes = 0;          // what that fraction lets PyTorch reserve
  int64_t peak_step = 0;          // the step whose peak the replay found (1-based): where a short cap fails
};

// The run's estimate under the budget (cmd_fit's replay), for a configuration and the expandable-segments setting.
using EstimateFn = std::function<Estimate(const RunConfig&, bool expandable_segments)>;

Safety borderline_safety(const ModelSpec& m, const RunConfig& c, bool expandable_segments, const Estimate& e,
                         const DeviceBudget& d, const EstimateFn& run);
nlohmann::json safety_json(const Safety& s);
std::string safety_text(const Safety& s);

}  // namespace memplan::cli
