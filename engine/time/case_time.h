// The step-time model applied to a model and run (engine/time/step_time.h): builds the graphs the time model
// costs (training: the step's graph; inference: the prefill and one decode step at the middle of generation).
#pragma once
#include <vector>

#include "engine/arch/spec.h"
#include "engine/run_config.h"
#include "engine/time/step_time.h"

namespace memplan::timing {

// Feature rows of a case: training one row (the step); inference the prefill row, then (generate_tokens > 1)
// the decode-step row (generate(N) - generate(1)) / (N - 1) is compared with.
std::vector<Features> case_features(const ModelSpec& spec, const RunConfig& cfg, const OpRates& r = h200_op_rates());
// The same rows as timelines (what the fit re-costs under each trial of coefficients).
std::vector<Timeline> case_timelines(const ModelSpec& spec, const RunConfig& cfg, const OpRates& r = h200_op_rates());

// The first row's graph (the training step's, or the prefill's) costed per op name (step_time.h op_breakdown).
std::vector<OpNameCost> case_op_breakdown(const ModelSpec& spec, const RunConfig& cfg, const OpRates& r = h200_op_rates());

// Milliseconds with the embedded H200 coefficients (or `c`).
CaseTime case_time(const ModelSpec& spec, const RunConfig& cfg, const OpRates& r = h200_op_rates(),
                   const Coefficients& c = h200_coefficients());

}  // namespace memplan::timing
