// The memory timeline of a replay as an SVG: allocated bytes over the run stacked by ledger row, the caching
// allocator's reserved line, phase boundaries and the peak — what pytorch.org/memory_viz shows after a real run.
#pragma once
#include <string>

#include "engine/estimate.h"

namespace memplan::cli {

// Requires an Estimate made with EstimateOptions::replay.record_timeline = true.
std::string timeline_svg(const Estimate& e, const std::string& title);

}  // namespace memplan::cli
