// One line of the validation case format (data/validation/CASE-FORMAT.md): a model, a run configuration and,
// optionally, what PyTorch measured.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/arch/spec.h"
#include "engine/estimate.h"
#include "engine/run_config.h"

namespace memplan {

struct MeasuredStep {
  double start_mib = 0, batch_mib = 0, fwd_peak_mib = 0, after_fwd_mib = 0, bwd_peak_mib = 0, after_bwd_mib = 0,
         micro_rest_peak_mib = 0, opt_peak_mib = 0, end_mib = 0, step_peak_mib = 0;
};

struct Measured {
  std::optional<int64_t> params;
  std::optional<double> weights_mib, peak_allocated_mib, peak_reserved_mib;
  std::optional<double> prefill_peak_mib, kv_cache_mib, generate_peak_mib;
  std::optional<bool> oom;
  std::string oom_message;
  std::vector<MeasuredStep> steps;
  // Training under amp_fp16: the steps (1-based) whose optimizer.step() GradScaler skipped (CASE-FORMAT.md); empty
  // when none was, or when the row predates the field.
  std::vector<int> scaler_skipped_steps;
};

// Whether a measured training run reached the steady state memplan predicts: optimizer state alive in a forward
// and backward, i.e. some step before the last of `steps` did step (GradScaler skipped not all of them). A run
// that did not measured a shorter-lived configuration: it stays a validation row, but no error band counts it.
bool measured_steady_state(const Measured& m, int steps);

struct ValidationCase {
  std::string id;
  ModelSpec model;
  RunConfig run;
  std::optional<double> memory_cap_gib;
  bool expandable_segments = false;  // alloc_conf "expandable_segments:True"
  bool holdout = false;
  // The GPU a timed case ran on (its data/gpus.json id; key `gpu`): validate prices its step at that GPU's measured
  // kernel rates (engine/time/step_time.h measured_gpu). Memory does not depend on it.
  std::string timing_gpu = "h200-sxm-141gb";
  std::optional<Measured> measured;
};

// Parses one case. Throws InputError naming the field (prefixed by the case id when known), also for a key
// the format does not define (a typo, or a newer format's field): such a case is refused rather than predicted
// as if the key were absent. `distributed` (models/dist_config.h) sets run.distributed: the case is one rank's.
ValidationCase parse_validation_case(const nlohmann::json& j);

// The estimate options a case was measured under: its memory cap (set_per_process_memory_fraction) and allocator
// configuration.
EstimateOptions estimate_options_for(const ValidationCase& c);

// A measured training run short of the steady state (measured_steady_state over the harness's steps, those of
// estimate_options_for): its peak is below the run memplan predicts. False for inference runs and unmeasured cases.
bool case_short_of_steady_state(const ValidationCase& c);

}  // namespace memplan
