// The memory timeline of a replay as an SVG: allocated bytes over the run stacked by ledger row, the caching
// allocator's reserved line, phase boundaries and the peak — what pytorch.org/memory_viz shows after a real run.
#pragma once
#include <string>

#include "engine/estimate.h"

namespace memplan::cli {

// Requires an Estimate made with EstimateOptions::replay.record_timeline = true.
std::string timeline_svg(const Estimate& e, const std::string& title);

// The y axis on round values: GiB from 2 GiB up (MiB below), ticks every 1, 2 or 5 x 10^k units, at most 8
// intervals, the top at the first tick at or above `max_bytes` (> 0).
struct Axis {
  int64_t unit_bytes = 0;  // kGiB or kMiB
  const char* unit_name = "";
  double step_units = 0;   // between ticks
  int intervals = 0;       // ticks at 0, step, ..., intervals x step
  double top_units() const { return step_units * intervals; }
};
Axis round_axis(int64_t max_bytes);

}  // namespace memplan::cli
